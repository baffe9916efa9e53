"""Visible retries for every provider: one attempt streams, a failure worth retrying becomes a
RetryNotice (the turn voids the step) and a wait, the last one a ProviderError for a person.

Both SDKs (anthropic, openai) raise errors of the same shape: a status error with
`status_code`, `response.headers` and a JSON `body`; a connection error whose cause chain ends
in the OS error; a timeout. What is not an SDK error but breaks the stream midway (an httpx
read error, a stream that ends too early) is a StreamBroken.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentls.model.base import ErrorKind, ProviderError, RetryNotice, StreamEvent

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
# Error types that can arrive as an SSE `event: error` on a 200 stream and are worth retrying.
RETRYABLE_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}


class StreamBroken(Exception):
    """The stream broke after it started (retried like a connection failure)."""


@dataclass
class Failure:
    reason: str
    retryable: bool
    kind: ErrorKind = "network"
    status: int | None = None


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    timeout_s: float = 600.0

    def delay(self, attempt: int, exc: BaseException) -> float:
        """retry-after(-ms) when the server sent one, else exponential backoff with jitter;
        never more than max_delay_s."""
        response = getattr(exc, "response", None)
        retry_after = retry_after_s(response.headers) if response is not None else None
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay_s)
        backoff = self.base_delay_s * (2 ** (attempt - 1))
        jittered: float = min(backoff, self.max_delay_s) * (0.75 + random.random() * 0.5)
        return jittered


async def retried(
    policy: RetryPolicy,
    once: Callable[[], AsyncIterator[StreamEvent]],
    failure: Callable[[BaseException], Failure | None],
) -> AsyncIterator[StreamEvent]:
    """`once()`'s events, attempt after attempt until one completes. `failure` says what an
    exception means (None: not the provider's, raised as it is)."""
    attempt = 0
    while True:
        attempt += 1
        try:
            async for event in once():
                yield event
            return
        except StreamBroken as exc:
            what = Failure(str(exc), True)
            error: BaseException = exc
        except Exception as exc:
            found = failure(exc)
            if found is None:
                raise
            what, error = found, exc
        if not what.retryable or attempt >= policy.max_attempts:
            raise ProviderError(
                final_message(what.reason, attempt),
                kind=what.kind,
                status=what.status,
                attempts=attempt,
            ) from error
        delay = policy.delay(attempt, error)
        yield RetryNotice(attempt=attempt, delay_ms=int(delay * 1000), reason=what.reason)
        await asyncio.sleep(delay)


def broken(exc: Exception, timeout_s: float) -> StreamBroken:
    """What a non-SDK exception in the middle of a stream means (httpx/h11: the connection)."""
    if "Timeout" in exc.__class__.__name__:  # httpx.ReadTimeout and its kin
        return StreamBroken(
            f"timed out: no data from the API for {timeout_s:g} s in the middle of the answer"
        )
    detail = f": {exc}" if str(exc) else ""
    return StreamBroken(f"stream broken: {exc.__class__.__name__}{detail}")


def sdk_failure(exc: BaseException, sdk: Any, timeout_s: float) -> Failure | None:
    """What an exception of `sdk` (the anthropic or the openai module) means."""
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        return Failure(status_reason(exc), retryable(exc), status_kind(exc), status)
    if isinstance(exc, sdk.APITimeoutError):
        # The root of the chain is only a cancelled scope: say what happened.
        return Failure(f"timed out: no answer from the API within {timeout_s:g} s", True)
    if isinstance(exc, sdk.APIConnectionError):
        return Failure(connection_reason(exc), True)
    return None


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


def connection_reason(exc: BaseException) -> str:
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


def error_object(exc: Any) -> dict[str, Any] | None:
    """The error object of a status error's body: `{"error": {...}}` (Anthropic) or the object
    itself (the openai SDK unwraps it)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            return err
        if "message" in body:
            return body
    return None


def retryable(exc: Any) -> bool:
    response = getattr(exc, "response", None)
    should = response.headers.get("x-should-retry") if response is not None else None
    if should == "true":
        return True
    if should == "false":
        return False
    status = exc.status_code
    if status == 200:  # an `event: error` in the middle of a stream
        err = error_object(exc)
        return err is not None and err.get("type") in RETRYABLE_ERROR_TYPES
    return status in RETRYABLE_STATUS


# What the APIs say when the prompt does not fit the model's context window (Anthropic: "prompt
# is too long: N tokens > M maximum"; OpenAI-compatible: context_length_exceeded, "maximum
# context length").
_TOO_LONG = (
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "too many tokens",
)


def status_kind(exc: Any) -> ErrorKind:
    """The kind of a status error: by its status, and by its error object's type and message."""
    status = exc.status_code
    err = error_object(exc) or {}
    kind = str(err.get("type") or err.get("code") or "")
    text = f"{kind} {err.get('code') or ''} {err.get('message') or ''}".lower()
    if status == 413 or kind == "request_too_large" or any(t in text for t in _TOO_LONG):
        return "context_too_long"
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        return "auth"
    if status == 429 or kind == "rate_limit_error":
        return "rate_limit"
    if status in (408, 504) or kind == "timeout_error":
        return "network"
    if status >= 500 or kind in ("overloaded_error", "api_error") or status == 200:
        return "overloaded"
    return "bad_request"


def status_reason(exc: Any) -> str:
    if exc.status_code == 200:
        return f"error event in the stream: {_error_message(exc)}"
    return f"HTTP {exc.status_code}: {_error_message(exc)}"


def _error_message(exc: Any) -> str:
    err = error_object(exc)
    if err is not None and err.get("message"):
        return f"{err.get('type') or 'error'}: {err['message']}"
    return str(getattr(exc, "message", exc))


def final_message(reason: str, attempts: int) -> str:
    if attempts > 1:
        return f"The model request failed after {attempts} attempts; last error: {reason}"
    return f"The model request failed: {reason}"
