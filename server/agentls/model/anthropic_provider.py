"""Claude through the official `anthropic` SDK: streaming, normalized events, visible retries."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentls.model.base import (
    BlockStart,
    BlockStop,
    MessageBegin,
    MessageEnd,
    ModelRequest,
    ProviderError,
    RetryNotice,
    SignatureDelta,
    StepUsage,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}


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
        max_delay_s: float = 30.0,
        timeout_s: float = 600.0,
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url
        self.max_attempts = max_attempts
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.timeout_s = timeout_s
        self._client: AsyncAnthropic | None = None

    def client(self) -> AsyncAnthropic:
        if self._client is None:
            # Imported here: `import anthropic` costs most of a second, and a server must start fast.
            from anthropic import AsyncAnthropic

            api_key = self._api_key or os.environ.get("ANTHROPIC_API_KEY")
            if not api_key:
                raise ProviderError(
                    "No API key: set ANTHROPIC_API_KEY (or choose the offline model with --model scripted:demo)."
                )
            self._client = AsyncAnthropic(
                api_key=api_key,
                base_url=self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
                max_retries=0,
                timeout=self.timeout_s,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _retry_delay(self, attempt: int, exc: BaseException) -> float:
        retry_after = None
        response = getattr(exc, "response", None)
        if response is not None:
            header = response.headers.get("retry-after")
            if header:
                try:
                    retry_after = float(header)
                except ValueError:
                    retry_after = None
        if retry_after is not None:
            return min(retry_after, self.max_delay_s)
        backoff = self.base_delay_s * (2 ** (attempt - 1))
        jittered: float = min(backoff, self.max_delay_s) * (0.75 + random.random() * 0.5)
        return jittered

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        import anthropic

        attempt = 0
        while True:
            attempt += 1
            try:
                async for event in self._stream_once(request):
                    yield event
                return
            except anthropic.APIStatusError as exc:
                reason = f"HTTP {exc.status_code}: {_error_message(exc)}"
                if exc.status_code not in RETRYABLE_STATUS or attempt >= self.max_attempts:
                    raise ProviderError(_final_message(reason, attempt)) from exc
                delay = self._retry_delay(attempt, exc)
            except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
                reason = f"connection failed: {exc.__class__.__name__}: {exc}"
                if attempt >= self.max_attempts:
                    raise ProviderError(_final_message(reason, attempt)) from exc
                delay = self._retry_delay(attempt, exc)
            except _StreamBroken as exc:
                reason = str(exc)
                if attempt >= self.max_attempts:
                    raise ProviderError(_final_message(reason, attempt)) from exc
                delay = self._retry_delay(attempt, exc)
            yield RetryNotice(attempt=attempt, delay_ms=int(delay * 1000), reason=reason)
            await asyncio.sleep(delay)

    async def _stream_once(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        import anthropic

        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": request.messages,
            "stream": True,
        }
        if request.tools:
            kwargs["tools"] = request.tools
        if request.thinking:
            kwargs["thinking"] = request.thinking
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
                    elif btype == "text":
                        yield BlockStart(ev.index, "text")
                        if block.text:
                            yield TextDelta(ev.index, block.text)
                    # Other block kinds (server tools, redacted thinking) are not used by agentls.
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
            raise _StreamBroken(f"stream broken: {exc.__class__.__name__}: {exc}") from exc
        finally:
            await stream.close()
        if not ended:
            raise _StreamBroken("stream ended before the message was complete")


class _StreamBroken(Exception):
    pass


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return f"{err.get('type', 'error')}: {err['message']}"
    return str(getattr(exc, "message", exc))


def _final_message(reason: str, attempts: int) -> str:
    if attempts > 1:
        return f"The model request failed after {attempts} attempts; last error: {reason}"
    return f"The model request failed: {reason}"
