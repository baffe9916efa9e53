"""Claude through the official `anthropic` SDK: streaming, normalized events, visible retries.
The same provider serves Claude on Bedrock and Vertex (model/cloud.py): only the client differs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

from agentls.environ_scrub import credential
from agentls.model.base import (
    BlockStart,
    BlockStop,
    MessageBegin,
    MessageEnd,
    ModelRequest,
    ProviderError,
    SignatureDelta,
    StepUsage,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)
from agentls.model.caching import with_cache_breakpoints
from agentls.model.fit import fit_request
from agentls.model.providers import api_model_of
from agentls.model.retrying import (
    Failure,
    RetryPolicy,
    StreamBroken,
    broken,
    retried,
    retry_after_s,
    sdk_failure,
)

__all__ = ["AnthropicProvider", "retry_after_s"]


def _usage(raw: Any) -> StepUsage:
    if raw is None:
        return StepUsage()
    return StepUsage(
        input_tokens=getattr(raw, "input_tokens", 0) or 0,
        output_tokens=getattr(raw, "output_tokens", 0) or 0,
        cache_read_tokens=getattr(raw, "cache_read_input_tokens", 0) or 0,
        cache_write_tokens=getattr(raw, "cache_creation_input_tokens", 0) or 0,
    )


class AnthropicProvider:
    """Streams one reply per call. The SDK's own retries are off so that each attempt is visible."""

    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_attempts: int = 5,
        base_delay_s: float = 1.0,
        max_delay_s: float = 60.0,
        timeout_s: float = 600.0,
        prompt_caching: bool = True,
    ) -> None:
        self._api_key = api_key
        self.configure(
            base_url=base_url,
            max_attempts=max_attempts,
            base_delay_s=base_delay_s,
            max_delay_s=max_delay_s,
            timeout_s=timeout_s,
            prompt_caching=prompt_caching,
        )
        # AsyncAnthropic here, AsyncAnthropicBedrock / AsyncAnthropicVertex in model/cloud.py.
        self._client: Any = None

    def configure(
        self,
        *,
        base_url: str | None,
        max_attempts: int,
        base_delay_s: float,
        max_delay_s: float,
        timeout_s: float,
        prompt_caching: bool,
    ) -> None:
        """The endpoint, retries, timeout and caching (before the first request)."""
        self._base_url = base_url
        self.max_attempts = max_attempts
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.timeout_s = timeout_s
        self.prompt_caching = prompt_caching

    def client(self) -> Any:
        if self._client is None:
            # Imported here: `import anthropic` costs most of a second, and a server must start fast.
            from anthropic import AsyncAnthropic

            # Taken out of os.environ at start (environ_scrub.take_credentials): held there.
            api_key = self._api_key or credential("ANTHROPIC_API_KEY")
            auth_token = credential("ANTHROPIC_AUTH_TOKEN")
            if not api_key and not auth_token:
                raise ProviderError(
                    "No API key: set ANTHROPIC_API_KEY (or choose the offline model with --model scripted:demo).",
                    kind="auth",
                )
            self._client = AsyncAnthropic(
                api_key=api_key,
                auth_token=auth_token,
                base_url=self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                max_retries=0,
                timeout=self.timeout_s,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def setup_failure(self, exc: BaseException) -> Failure | None:
        """What a failure of the client's own setup means (credentials, project: model/cloud.py);
        None: not one."""
        return None

    @property
    def policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_attempts, self.base_delay_s, self.max_delay_s, self.timeout_s)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self._client is None:
            # The SDK's import (most of a second; `agentls serve` starts it in the background at
            # initialize) and the client's TLS setup, off the event loop: a server waiting for
            # them still answers its other requests.
            try:
                await asyncio.to_thread(self.client)
            except ValueError as exc:  # the SDK's word for missing region, project, ...
                raise ProviderError(f"{self.name}: {exc}") from exc
        import anthropic

        request = fit_request(request)

        def failure(exc: BaseException) -> Failure | None:
            return sdk_failure(exc, anthropic, self.timeout_s) or self.setup_failure(exc)

        async for event in retried(self.policy, lambda: self._stream_once(request), failure):
            yield event

    async def _stream_once(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        import anthropic

        system, tools, messages = request.system, request.tools, request.messages
        if self.prompt_caching and request.cache:
            system, tools, messages = with_cache_breakpoints(system, tools, messages)
        kwargs: dict[str, Any] = {
            "model": api_model_of(request.model, self.name),
            "max_tokens": request.max_tokens,
            "system": system,
            "messages": messages,
            "stream": True,
        }
        if tools:
            kwargs["tools"] = tools
        if request.thinking:
            kwargs["thinking"] = request.thinking
        if request.output_config:
            kwargs["output_config"] = request.output_config
        stream = await self.client().messages.create(**kwargs)
        ended = False
        try:
            async for ev in stream:
                kind = ev.type
                if kind == "content_block_delta":
                    delta = ev.delta
                    dkind = delta.type
                    if dkind == "text_delta":
                        yield TextDelta(ev.index, delta.text)
                    elif dkind == "input_json_delta":
                        yield ToolInputDelta(ev.index, delta.partial_json)
                    elif dkind == "thinking_delta":
                        yield ThinkingDelta(ev.index, delta.thinking)
                    elif dkind == "signature_delta":
                        yield SignatureDelta(ev.index, delta.signature)
                elif kind == "content_block_start":
                    block = ev.content_block
                    btype = block.type
                    if btype == "tool_use":
                        yield BlockStart(
                            ev.index, "tool_use", tool_id=block.id, tool_name=block.name
                        )
                    elif btype == "thinking":
                        yield BlockStart(ev.index, "thinking")
                    elif btype == "redacted_thinking":
                        yield BlockStart(ev.index, "thinking", data=block.data)
                    elif btype == "text":
                        yield BlockStart(ev.index, "text")
                        if block.text:
                            yield TextDelta(ev.index, block.text)
                    # Other block kinds (server tools) are not used by agentls.
                elif kind == "content_block_stop":
                    yield BlockStop(ev.index)
                elif kind == "message_start":
                    yield MessageBegin(ev.message.id, _usage(ev.message.usage))
                elif kind == "message_delta":
                    ended = True
                    yield MessageEnd(ev.delta.stop_reason, _usage(ev.usage))
        except anthropic.APIError:
            raise
        except Exception as exc:  # httpx/h11 errors mid-stream: the connection broke
            raise broken(exc, self.timeout_s) from exc
        finally:
            await stream.close()
        if not ended:
            raise StreamBroken("stream ended before the message was complete")
