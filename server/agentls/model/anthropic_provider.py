"""Claude through the official `anthropic` SDK: streaming, normalized events, visible retries."""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from agentls.environ_scrub import credential
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
from agentls.model.caching import with_cache_breakpoints

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
# Error types that can arrive as an SSE `event: error` on a 200 stream and are worth retrying.
RETRYABLE_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}


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
        self._base_url = base_url
        self.max_attempts = max_attempts
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.timeout_s = timeout_s
        self.prompt_caching = prompt_caching
        self._client: AsyncAnthropic | None = None

    def client(self) -> AsyncAnthropic:
        if self._client is None:
            # Imported here: `import anthropic` costs most of a second, and a server must start fast.
            from anthropic import AsyncAnthropic

            # Taken out of os.environ at start (environ_scrub.take_credentials): held there.
            api_key = self._api_key or credential("ANTHROPIC_API_KEY")
            auth_token = credential("ANTHROPIC_AUTH_TOKEN")
            if not api_key and not auth_token:
                raise ProviderError(
                    "No API key: set ANTHROPIC_API_KEY (or choose the offline model with --model scripted:demo)."
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

    def _retry_delay(self, attempt: int, exc: BaseException) -> float:
        """retry-after(-ms) when the server sent one, else exponential backoff with jitter;
        never more than max_delay_s."""
        response = getattr(exc, "response", None)
        retry_after = retry_after_s(response.headers) if response is not None else None
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay_s)
        backoff = self.base_delay_s * (2 ** (attempt - 1))
        jittered: float = min(backoff, self.max_delay_s) * (0.75 + random.random() * 0.5)
        return jittered

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self._client is None:
            # The SDK's import (most of a second; `agentls serve` starts it in the background at
            # initialize) and the client's TLS setup, off the event loop: a server waiting for
            # them still answers its other requests.
            await asyncio.to_thread(self.client)
        import anthropic

        attempt = 0
        while True:
            attempt += 1
            try:
                async for event in self._stream_once(request):
                    yield event
                return
            except anthropic.APIStatusError as exc:
                reason = _status_reason(exc)
                if not _retryable(exc) or attempt >= self.max_attempts:
                    raise ProviderError(_final_message(reason, attempt)) from exc
                delay = self._retry_delay(attempt, exc)
            except (anthropic.APIConnectionError, anthropic.APITimeoutError) as exc:
                if isinstance(exc, anthropic.APITimeoutError):
                    # The root of the chain is only a cancelled scope: say what happened.
                    reason = f"timed out: no answer from the API within {self.timeout_s:g} s"
                else:
                    reason = _connection_reason(exc)
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

        system, tools, messages = request.system, request.tools, request.messages
        if self.prompt_caching and request.cache:
            system, tools, messages = with_cache_breakpoints(system, tools, messages)
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "system": system,
            "messages": messages,
            "stream": True,
        }
        if tools:
            kwargs["tools"] = tools
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
            if "Timeout" in exc.__class__.__name__:  # httpx.ReadTimeout and its kin
                raise _StreamBroken(
                    f"timed out: no data from the API for {self.timeout_s:g} s in the middle "
                    "of the answer"
                ) from exc
            detail = f": {exc}" if str(exc) else ""
            raise _StreamBroken(f"stream broken: {exc.__class__.__name__}{detail}") from exc
        finally:
            await stream.close()
        if not ended:
            raise _StreamBroken("stream ended before the message was complete")


class _StreamBroken(Exception):
    pass


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait: retry-after-ms, else retry-after (seconds or a date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return float(raw_ms) / 1000
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(raw)
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def _connection_reason(exc: BaseException) -> str:
    """What broke, from the root of the exception chain (httpx -> httpcore -> the OS error)."""
    kind = "timed out" if exc.__class__.__name__ == "APITimeoutError" else "connection failed"
    chain: list[BaseException] = []
    cause = exc.__cause__ or exc.__context__
    while cause is not None and cause not in chain and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    for root in reversed(chain):
        if str(root):
            return f"{kind}: {root.__class__.__name__}: {root}"
    if chain:
        return f"{kind}: {chain[0].__class__.__name__}"
    return f"{kind}: {exc}"


def _error_type(exc: Any) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("type"), str):
            return str(err["type"])
    return None


def _retryable(exc: Any) -> bool:
    response = getattr(exc, "response", None)
    should = response.headers.get("x-should-retry") if response is not None else None
    if should == "true":
        return True
    if should == "false":
        return False
    status = exc.status_code
    if status == 200:  # an `event: error` in the middle of a stream
        return _error_type(exc) in RETRYABLE_ERROR_TYPES
    return status in RETRYABLE_STATUS


def _status_reason(exc: Any) -> str:
    if exc.status_code == 200:
        return f"error event in the stream: {_error_message(exc)}"
    return f"HTTP {exc.status_code}: {_error_message(exc)}"


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
