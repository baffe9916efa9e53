"""Scripted replies as plain data: content blocks, a reply with its delivery options, HTTP errors,
and the builders tests write them with (``reply(text("hi"), tool_use("read", {...}))``)."""

from __future__ import annotations

import random
import string
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

_B62 = string.ascii_letters + string.digits
_rng = random.SystemRandom()


def random_id(prefix: str) -> str:
    """``prefix`` and 22 base62 characters, the shape of the real API's ids."""
    return prefix + "".join(_rng.choices(_B62, k=22))


def new_tool_use_id() -> str:
    """A fresh id shaped like the real API's (``toolu_01`` + 22 base62 characters)."""
    return random_id("toolu_01")


@dataclass
class Text:
    text: str


@dataclass
class ToolUse:
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_tool_use_id)
    # Streamed instead of json.dumps(input) when set (e.g. to send malformed JSON).
    input_json: str | None = None


@dataclass
class Thinking:
    thinking: str
    signature: str = "sig"


@dataclass
class RedactedThinking:
    data: str


Block: TypeAlias = Text | ToolUse | Thinking | RedactedThinking


@dataclass
class ErrorReply:
    """An HTTP error answer: ``{"type":"error","error":{"type":...,"message":...}}``."""

    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)

    def body(self, request_id: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "error",
            "error": {"type": self.type, "message": self.message},
        }
        if request_id is not None:
            out["request_id"] = request_id
        return out


@dataclass
class Reply:
    """A scripted assistant message plus delivery options.

    ``usage`` entries override the computed usage (``input_tokens`` = estimate of the
    request size, ``output_tokens`` = estimate of the reply size, cache fields 0).
    Delivery options (streaming; non-streaming answers honour ``delay_s`` once, ``hold``
    and ``cut_after`` (closes the connection without any response)):

    * ``chunk_size``: characters per text/thinking/JSON delta (default: ~3 pieces).
    * ``delay_s``: sleep before each event after the first.
    * ``hold``: stall after ``hold_after`` events (default: after message_start+ping)
      until the event is set, the client disconnects or the server stops.
    * ``cut_after``: send that many events, then drop the connection.
    * ``error_event`` / ``error_after``: send ``event: error`` after that many events
      (default: after message_start+ping) and end the stream.
    * ``reset``: close the connection (RST) before sending any byte of the response.
    * ``garbage`` / ``garbage_after``: write these raw bytes (a malformed SSE frame) after that
      many events (default: after message_start+ping), then go on with the rest of the stream.
    """

    blocks: list[Block] = field(default_factory=list)
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    id: str | None = None
    chunk_size: int | None = None
    delay_s: float = 0.0
    hold: threading.Event | None = None
    hold_after: int | None = None
    cut_after: int | None = None
    error_event: ErrorReply | None = None
    error_after: int | None = None
    ping: bool = True
    reset: bool = False
    garbage: bytes | None = None
    garbage_after: int | None = None

    @property
    def effective_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.blocks) else "end_turn"


ReplySpec: TypeAlias = Reply | ErrorReply
ReplyLike: TypeAlias = (
    Reply | ErrorReply | str | Callable[[dict[str, Any]], "Reply | ErrorReply | str"]
)


def text(s: str) -> Text:
    return Text(s)


def tool_use(
    name: str,
    input: dict[str, Any] | None = None,
    id: str | None = None,
    *,
    input_json: str | None = None,
) -> ToolUse:
    return ToolUse(name, dict(input or {}), id or new_tool_use_id(), input_json)


def thinking(s: str, signature: str = "sig") -> Thinking:
    return Thinking(s, signature)


def redacted_thinking(data: str = "redacted") -> RedactedThinking:
    return RedactedThinking(data)


def reply(
    *blocks: Block | str,
    stop_reason: str | None = None,
    stop_sequence: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str | None = None,
    id: str | None = None,
    chunk_size: int | None = None,
    delay_s: float = 0.0,
    hold: threading.Event | None = None,
    hold_after: int | None = None,
    cut_after: int | None = None,
    error_event: ErrorReply | None = None,
    error_after: int | None = None,
    ping: bool = True,
) -> Reply:
    """Build a reply; bare strings are text blocks.  ``stop_reason`` defaults to
    ``"tool_use"`` if any block is a tool_use, else ``"end_turn"``."""
    return Reply(
        blocks=[Text(b) if isinstance(b, str) else b for b in blocks],
        stop_reason=stop_reason,
        stop_sequence=stop_sequence,
        usage=dict(usage or {}),
        model=model,
        id=id,
        chunk_size=chunk_size,
        delay_s=delay_s,
        hold=hold,
        hold_after=hold_after,
        cut_after=cut_after,
        error_event=error_event,
        error_after=error_after,
        ping=ping,
    )


# What the server answers when no reply is queued.
DEFAULT_REPLY = Reply(blocks=[Text("(no scripted reply)")])

_DEFAULT_ERROR_MESSAGES = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}


def error(
    status: int,
    type: str,
    message: str | None = None,
    headers: dict[str, str] | None = None,
) -> ErrorReply:
    """An HTTP error reply, e.g. ``error(429, "rate_limit_error", headers={"retry-after": "1"})``."""
    msg = message if message is not None else _DEFAULT_ERROR_MESSAGES.get(type, type)
    return ErrorReply(status, type, msg, dict(headers or {}))


def cut_after(n_events: int, base: Reply | None = None) -> Reply:
    """``base`` (default: a short text reply) but the connection drops after ``n_events``."""
    return replace(base or reply(text("this stream will be cut")), cut_after=n_events)


def connection_reset() -> Reply:
    """A reply that resets the connection before the first byte of the response."""
    return replace(reply(text("never sent")), reset=True)


# A content_block_delta whose data is cut off in the middle of its JSON.
BROKEN_SSE_FRAME = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"ty\n\n'
)


def malformed_sse(
    n_events: int | None = None, frame: bytes = BROKEN_SSE_FRAME, base: Reply | None = None
) -> Reply:
    """``base`` but a malformed SSE frame (default: a delta with truncated JSON data) is written
    after ``n_events`` (default: after message_start+ping); the rest of the stream follows."""
    return replace(
        base or reply(text("this stream has a broken frame")), garbage=frame, garbage_after=n_events
    )


def stream_error(
    n_events: int | None = None,
    type: str = "overloaded_error",
    message: str = "Overloaded",
    base: Reply | None = None,
) -> Reply:
    """``base`` but an SSE ``event: error`` is sent after ``n_events`` (default: after
    message_start+ping) and the stream ends there, like the real API's mid-stream errors."""
    return replace(
        base or reply(text("this stream will fail")),
        error_event=ErrorReply(529 if type == "overloaded_error" else 500, type, message),
        error_after=n_events,
    )
