"""A local test double for Anthropic's Messages API (``POST /v1/messages``).

The real ``anthropic`` SDK works against it unchanged::

    from tests.support.messages_api import MessagesAPIServer, reply, text, tool_use

    with MessagesAPIServer() as srv:
        srv.enqueue(reply(text("Let me look."), tool_use("read", {"path": "a.py"})))
        srv.enqueue(reply(text("Done.")))
        client = AsyncAnthropic(base_url=srv.url, api_key="test", max_retries=0)
        ...
        srv.requests[0].body["messages"]  # what the agent sent

Replies are consumed FIFO, one per *accepted* ``POST /v1/messages`` (requests rejected by
validation or auth do not consume a reply).  When the queue is empty the server answers
``default`` (constructor argument), which itself defaults to an ``end_turn`` reply with the
text ``"(no scripted reply)"``.  A queued item may be

* a :class:`Reply` (``reply(...)``, ``cut_after(...)``, ``stream_error(...)``,
  ``malformed_sse(...)``, ``connection_reset()``),
* an :class:`ErrorReply` (``error(...)``): an HTTP error in the real API's JSON shape,
* a ``str`` (shorthand for ``reply(text(s))``),
* a callable ``(request_body: dict) -> Reply | ErrorReply | str`` evaluated per request.

Streams (``"stream": true``) are sent as SSE with chunked transfer encoding on a keep-alive
HTTP/1.1 connection; the event order is ``message_start``, ``ping`` (unless ``ping=False``),
then per block ``content_block_start`` / ``content_block_delta``... / ``content_block_stop``,
then ``message_delta`` and ``message_stop``.  Event positions used by ``cut_after``,
``hold_after``, ``error_after`` and ``garbage_after`` count these events from 0.

Subprocess mode (for pointing a separately launched CLI at it)::

    python -m tests.support.messages_api --port 0 --script replies.json [--record log.jsonl]

prints ``READY http://127.0.0.1:PORT`` once listening and serves until SIGTERM/SIGINT.  The
script file is either a JSON list of replies or ``{"replies": [...], "default": reply}``;
see :func:`reply_from_json` for the format and :func:`write_script` to produce one.  (It runs
from the repository root; the file is stdlib-only, so ``python tests/support/messages_api.py``
works too.)  Control endpoints for the test process (not recorded, any mode):
``POST /_test/enqueue`` (a reply JSON or a list of them), ``GET|POST /_test/release``
(release stalled ``hold`` streams), ``GET /_test/requests`` (recorded requests as JSON; a
stream's ``resumed_at`` and ``finished_at`` say, as ``time.time()``, when it went on after a hold
and when its last byte was written, for latency measurements such as bench/stream.py's) and
``POST /_test/clear`` (forget recorded requests and queued replies, e.g. between the rounds of
a benchmark, whose recorded bodies would otherwise pile up in the server).

Validation also requires the ``anthropic-version`` header (the SDK always sends it).

Prompt caching: :func:`cache_prefixes` gives, for a request body, the bytes the cache keys on up
to each ``cache_control`` breakpoint (the request serialized in cache order: model, tools,
system, messages, without the ``cache_control`` markers themselves), and
:func:`cache_prefix_problem` says why a request would not read the cache the previous request
wrote (None when it would).  With ``MessagesAPIServer(simulate_cache=True)`` the server keeps
the prefixes it has seen and reports ``cache_read_input_tokens`` (the longest breakpoint prefix
seen before), ``cache_creation_input_tokens`` (from there to the last breakpoint) and
``input_tokens`` (the rest), each as characters // 4.  The simulation is stricter than the real
API: a read needs a breakpoint at exactly the earlier prefix (no 20-block lookback), and there
is no minimum cacheable length.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import select
import signal
import socket
import string
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeAlias
from urllib.parse import urlsplit

__all__ = [
    "Block",
    "ErrorReply",
    "MessagesAPIServer",
    "RecordedRequest",
    "RedactedThinking",
    "Reply",
    "ReplyLike",
    "ReplySpec",
    "Text",
    "Thinking",
    "ToolUse",
    "cache_prefix_problem",
    "cache_prefixes",
    "connection_reset",
    "cut_after",
    "error",
    "estimate_input_tokens",
    "load_script",
    "main",
    "malformed_sse",
    "new_tool_use_id",
    "redacted_thinking",
    "reply",
    "reply_from_json",
    "reply_to_json",
    "stream_error",
    "text",
    "thinking",
    "tool_use",
    "validate_request",
    "write_script",
]

# --------------------------------------------------------------------------------------
# ids

_B62 = string.ascii_letters + string.digits
_rng = random.SystemRandom()


def _rand(n: int) -> str:
    return "".join(_rng.choices(_B62, k=n))


def new_tool_use_id() -> str:
    """A fresh id shaped like the real API's (``toolu_01`` + 22 base62 characters)."""
    return "toolu_01" + _rand(22)


def _new_message_id() -> str:
    return "msg_01" + _rand(22)


def _new_request_id() -> str:
    return "req_01" + _rand(22)


# --------------------------------------------------------------------------------------
# reply specification (plain data)


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


# --------------------------------------------------------------------------------------
# JSON script format


def _block_from_json(obj: Any) -> Block:
    if isinstance(obj, str):
        return Text(obj)
    if not isinstance(obj, dict):
        raise ValueError(f"block must be an object or a string, got {obj!r}")
    t = obj.get("type")
    if t == "text":
        return Text(str(obj["text"]))
    if t == "tool_use":
        return tool_use(
            obj["name"], obj.get("input") or {}, obj.get("id"), input_json=obj.get("input_json")
        )
    if t == "thinking":
        return Thinking(str(obj["thinking"]), str(obj.get("signature", "sig")))
    if t == "redacted_thinking":
        return RedactedThinking(str(obj.get("data", "redacted")))
    raise ValueError(f"unknown block type {t!r}")


def _block_to_json(b: Block) -> dict[str, Any]:
    if isinstance(b, Text):
        return {"type": "text", "text": b.text}
    if isinstance(b, ToolUse):
        out: dict[str, Any] = {"type": "tool_use", "name": b.name, "input": b.input, "id": b.id}
        if b.input_json is not None:
            out["input_json"] = b.input_json
        return out
    if isinstance(b, Thinking):
        return {"type": "thinking", "thinking": b.thinking, "signature": b.signature}
    return {"type": "redacted_thinking", "data": b.data}


def _error_from_json(obj: dict[str, Any]) -> ErrorReply:
    return error(int(obj["status"]), str(obj["type"]), obj.get("message"), obj.get("headers"))


def reply_from_json(obj: Any) -> ReplySpec:
    """Parse one script entry.

    * ``"hello"`` -> ``reply(text("hello"))``
    * ``{"error": {"status": 429, "type": "rate_limit_error", "message": "...",
      "headers": {"retry-after": "1"}}}`` -> :class:`ErrorReply`
    * ``{"blocks": [...], "stop_reason": ..., "stop_sequence": ..., "usage": {...},
      "model": ..., "id": ..., "chunk_size": N, "delay_s": S, "hold": true,
      "hold_after": N, "cut_after": N, "error_after": N,
      "stream_error": {"type": "overloaded_error", "message": "Overloaded"}, "ping": true,
      "reset": true, "garbage": "raw SSE text", "garbage_after": N}``
      where blocks are ``"text"`` / ``{"type":"text","text":...}`` /
      ``{"type":"tool_use","name":...,"input":{...},"id"?:...,"input_json"?:...}`` /
      ``{"type":"thinking","thinking":...,"signature"?:...}`` /
      ``{"type":"redacted_thinking","data":...}``.
      ``"hold": true`` stalls until the client disconnects or the server stops.
    """
    if isinstance(obj, str):
        return reply(text(obj))
    if not isinstance(obj, dict):
        raise ValueError(f"reply must be an object or a string, got {obj!r}")
    if "error" in obj and "blocks" not in obj:
        return _error_from_json(obj["error"])
    se = obj.get("stream_error")
    return Reply(
        blocks=[_block_from_json(b) for b in obj.get("blocks", [])],
        stop_reason=obj.get("stop_reason"),
        stop_sequence=obj.get("stop_sequence"),
        usage=dict(obj.get("usage") or {}),
        model=obj.get("model"),
        id=obj.get("id"),
        chunk_size=obj.get("chunk_size"),
        delay_s=float(obj.get("delay_s", 0.0)),
        hold=threading.Event() if obj.get("hold") else None,
        hold_after=obj.get("hold_after"),
        cut_after=obj.get("cut_after"),
        error_event=(
            ErrorReply(
                int(se.get("status", 529)),
                str(se.get("type", "overloaded_error")),
                str(se.get("message", "Overloaded")),
            )
            if se is not None
            else None
        ),
        error_after=obj.get("error_after"),
        ping=bool(obj.get("ping", True)),
        reset=bool(obj.get("reset", False)),
        garbage=obj["garbage"].encode() if obj.get("garbage") is not None else None,
        garbage_after=obj.get("garbage_after"),
    )


def reply_to_json(spec: ReplySpec | str) -> Any:
    """Inverse of :func:`reply_from_json` (a ``hold`` event becomes ``"hold": true``)."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, ErrorReply):
        e: dict[str, Any] = {"status": spec.status, "type": spec.type, "message": spec.message}
        if spec.headers:
            e["headers"] = spec.headers
        return {"error": e}
    out: dict[str, Any] = {"blocks": [_block_to_json(b) for b in spec.blocks]}
    for name in (
        "stop_reason",
        "stop_sequence",
        "model",
        "id",
        "chunk_size",
        "hold_after",
        "cut_after",
        "error_after",
        "garbage_after",
    ):
        value = getattr(spec, name)
        if value is not None:
            out[name] = value
    if spec.usage:
        out["usage"] = spec.usage
    if spec.delay_s:
        out["delay_s"] = spec.delay_s
    if spec.hold is not None:
        out["hold"] = True
    if spec.error_event is not None:
        ev = spec.error_event
        out["stream_error"] = {"status": ev.status, "type": ev.type, "message": ev.message}
    if not spec.ping:
        out["ping"] = False
    if spec.reset:
        out["reset"] = True
    if spec.garbage is not None:
        out["garbage"] = spec.garbage.decode("utf-8", "replace")
    return out


def load_script(path: str | Path) -> tuple[list[ReplySpec], ReplySpec | None]:
    """Read a script file: a JSON list of replies or ``{"replies": [...], "default": ...}``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    default: ReplySpec | None = None
    if isinstance(data, dict):
        if data.get("default") is not None:
            default = reply_from_json(data["default"])
        data = data.get("replies", [])
    if not isinstance(data, list):
        raise ValueError("script must be a JSON list of replies or {'replies': [...]}")
    return [reply_from_json(x) for x in data], default


def write_script(
    path: str | Path,
    replies: Iterable[ReplySpec | str],
    default: ReplySpec | str | None = None,
) -> Path:
    """Write replies (no callables) as a script file for ``--script``; returns the path."""
    p = Path(path)
    obj: dict[str, Any] = {"replies": [reply_to_json(r) for r in replies]}
    if default is not None:
        obj["default"] = reply_to_json(default)
    p.write_text(json.dumps(obj, indent=1), encoding="utf-8")
    return p


# --------------------------------------------------------------------------------------
# validation (mirrors the real API's 400 invalid_request_error cases)


class _Invalid(Exception):
    pass


_TOOL_ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
_TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ALLOWED_KEYS = frozenset(
    {
        "model", "messages", "max_tokens", "system", "tools", "tool_choice", "stream",
        "stop_sequences", "metadata", "thinking", "service_tier", "container", "cache_control",
        "diagnostics", "inference_geo", "output_config", "speed", "user_profile_id",
        "workspace_id", "temperature", "top_p", "top_k", "mcp_servers", "context_management",
    }
)  # fmt: skip
MAX_CACHE_CONTROL_BLOCKS = 4


def _has_cache_control(block: Any) -> bool:
    return isinstance(block, dict) and block.get("cache_control") is not None


def _check_text_block(b: dict[str, Any], where: str) -> None:
    t = b.get("text")
    if not isinstance(t, str):
        raise _Invalid(f"{where}.text: Field required")
    if t == "":
        raise _Invalid(f"{where}.text: text content blocks must be non-empty")
    if not t.strip():
        raise _Invalid(f"{where}.text: text content blocks must contain non-whitespace text")


def _validate(body: Any, count_tokens: bool) -> None:  # noqa: C901 - a flat list of rules
    if not isinstance(body, dict):
        raise _Invalid("Request body must be a JSON object")
    required = ("model", "messages") if count_tokens else ("model", "max_tokens", "messages")
    for key in required:
        if key not in body:
            raise _Invalid(f"{key}: Field required")
    extra = sorted(set(body) - _ALLOWED_KEYS - ({"max_tokens"} if count_tokens else set()))
    if extra:
        raise _Invalid(f"{extra[0]}: Extra inputs are not permitted")
    if not isinstance(body["model"], str) or not body["model"]:
        raise _Invalid("model: Input should be a valid non-empty string")
    max_tokens = body.get("max_tokens")
    if not count_tokens:
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise _Invalid("max_tokens: Input should be a valid integer")
        if max_tokens < 0:
            raise _Invalid("max_tokens: Input should be greater than or equal to 0")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise _Invalid("stream: Input should be a valid boolean")

    cache_blocks = 1 if body.get("cache_control") is not None else 0

    # tools
    tools = body.get("tools")
    tool_names: list[str] = []
    if tools is not None:
        if not isinstance(tools, list):
            raise _Invalid("tools: Input should be a valid list")
        for i, tool in enumerate(tools):
            if not isinstance(tool, dict):
                raise _Invalid(f"tools.{i}: Input should be a valid dictionary")
            cache_blocks += _has_cache_control(tool)
            name = tool.get("name")
            ttype = tool.get("type")
            if ttype not in (None, "custom"):  # server / versioned tools: only need a name
                if isinstance(name, str):
                    tool_names.append(name)
                continue
            if not isinstance(name, str):
                raise _Invalid(f"tools.{i}.custom.name: Field required")
            if not _TOOL_NAME_RE.match(name):
                raise _Invalid(
                    f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
                )
            schema = tool.get("input_schema")
            if not isinstance(schema, dict):
                raise _Invalid(f"tools.{i}.custom.input_schema: Field required")
            if schema.get("type") != "object":
                raise _Invalid(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
            tool_names.append(name)
        if len(set(tool_names)) != len(tool_names):
            dup = next(n for n in tool_names if tool_names.count(n) > 1)
            raise _Invalid(f"tools: Tool names must be unique. Duplicate: {dup!r}")

    tool_choice = body.get("tool_choice")
    if tool_choice is not None:
        if not isinstance(tool_choice, dict) or tool_choice.get("type") not in (
            "auto", "any", "tool", "none",
        ):  # fmt: skip
            raise _Invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
        if tool_choice["type"] != "none" and not tools:
            raise _Invalid("tool_choice may only be specified while providing tools")
        if tool_choice["type"] == "tool" and tool_choice.get("name") not in tool_names:
            raise _Invalid(
                f"tool_choice.tool.name: no tool named {tool_choice.get('name')!r} in tools"
            )

    think = body.get("thinking")
    thinking_enabled = False
    if think is not None:
        if not isinstance(think, dict) or think.get("type") not in (
            "enabled",
            "disabled",
            "adaptive",
        ):
            raise _Invalid("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
        if think["type"] == "enabled":
            thinking_enabled = True
            budget = think.get("budget_tokens")
            if not isinstance(budget, int) or budget < 1024:
                raise _Invalid(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                )
            if not count_tokens and isinstance(max_tokens, int) and max_tokens <= budget:
                raise _Invalid("max_tokens must be greater than thinking.budget_tokens")
            if isinstance(tool_choice, dict) and tool_choice.get("type") in ("any", "tool"):
                raise _Invalid("Thinking may not be enabled when tool_choice forces tool use.")

    # system
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list):
            raise _Invalid("system: Input should be a valid string or list of text blocks")
        for j, b in enumerate(system):
            if not isinstance(b, dict) or b.get("type") != "text":
                raise _Invalid(f"system.{j}.type: Input should be 'text'")
            _check_text_block(b, f"system.{j}")
            cache_blocks += _has_cache_control(b)

    # messages: per-message structure
    messages = body["messages"]
    if not isinstance(messages, list):
        raise _Invalid("messages: Input should be a valid list")
    if not messages:
        raise _Invalid("messages: at least one message is required")
    last = len(messages) - 1
    # turns: consecutive same-role messages merged; items are (msg_index, block_index, block)
    turns: list[tuple[str, list[tuple[int, int, dict[str, Any]]]]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise _Invalid(f"messages.{i}: Input should be a valid dictionary")
        role = m.get("role")
        if "role" not in m:
            raise _Invalid(f"messages.{i}.role: Field required")
        if role not in ("user", "assistant"):
            raise _Invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if i == 0 and role != "user":
            raise _Invalid('messages: first message must use the "user" role')
        if "content" not in m:
            raise _Invalid(f"messages.{i}.content: Field required")
        content = m["content"]
        final_assistant = i == last and role == "assistant"
        if not isinstance(content, str | list):
            raise _Invalid(
                f"messages.{i}.content: Input should be a valid string or list of content blocks"
            )
        if not content:
            if final_assistant:
                continue
            raise _Invalid(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        items: list[tuple[int, int, dict[str, Any]]] = []
        if isinstance(content, str):
            if not content.strip() and not final_assistant:
                raise _Invalid(
                    f"messages.{i}.content: text content blocks must contain non-whitespace text"
                )
            items.append((i, 0, {"type": "text", "text": content}))
        else:
            for j, b in enumerate(content):
                where = f"messages.{i}.content.{j}"
                if not isinstance(b, dict) or not isinstance(b.get("type"), str):
                    raise _Invalid(f"{where}.type: Field required")
                cache_blocks += _has_cache_control(b)
                btype = b["type"]
                if btype == "text":
                    _check_text_block(b, where)
                elif btype == "tool_use":
                    if role != "assistant":
                        raise _Invalid(
                            f"{where}: `tool_use` blocks are only allowed in assistant messages"
                        )
                    tid = b.get("id")
                    if not isinstance(tid, str):
                        raise _Invalid(f"{where}.tool_use.id: Field required")
                    if not _TOOL_ID_RE.match(tid):
                        raise _Invalid(
                            f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                        )
                    if not isinstance(b.get("name"), str) or not b["name"]:
                        raise _Invalid(f"{where}.tool_use.name: Field required")
                    if not isinstance(b.get("input"), dict):
                        raise _Invalid(
                            f"{where}.tool_use.input: Input should be a valid dictionary"
                        )
                elif btype == "tool_result":
                    if role != "user":
                        raise _Invalid(
                            f"{where}: `tool_result` blocks are only allowed in user messages"
                        )
                    tid = b.get("tool_use_id")
                    if not isinstance(tid, str):
                        raise _Invalid(f"{where}.tool_result.tool_use_id: Field required")
                    if not _TOOL_ID_RE.match(tid):
                        raise _Invalid(
                            f"{where}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                        )
                    if "is_error" in b and not isinstance(b["is_error"], bool):
                        raise _Invalid(
                            f"{where}.tool_result.is_error: Input should be a valid boolean"
                        )
                    inner = b.get("content")
                    if isinstance(inner, list):
                        for k, ib in enumerate(inner):
                            iwhere = f"{where}.tool_result.content.{k}"
                            if not isinstance(ib, dict) or not isinstance(ib.get("type"), str):
                                raise _Invalid(f"{iwhere}.type: Field required")
                            cache_blocks += _has_cache_control(ib)
                            if ib["type"] == "text":
                                _check_text_block(ib, iwhere)
                    elif inner is not None and not isinstance(inner, str):
                        raise _Invalid(
                            f"{where}.tool_result.content: Input should be a valid string or list"
                        )
                elif btype == "thinking":
                    if role != "assistant":
                        raise _Invalid(
                            f"{where}: `thinking` blocks are only allowed in assistant messages"
                        )
                    if not isinstance(b.get("thinking"), str):
                        raise _Invalid(f"{where}.thinking.thinking: Field required")
                    if not isinstance(b.get("signature"), str):
                        raise _Invalid(f"{where}.thinking.signature: Field required")
                elif btype == "redacted_thinking":
                    if role != "assistant":
                        raise _Invalid(
                            f"{where}: `redacted_thinking` blocks are only allowed in assistant messages"
                        )
                    if not isinstance(b.get("data"), str):
                        raise _Invalid(f"{where}.redacted_thinking.data: Field required")
                items.append((i, j, b))
        if final_assistant:
            tail = items[-1][2] if items else None
            if tail is not None and tail.get("type") == "text":
                t = tail.get("text", "")
                if isinstance(t, str) and t != t.rstrip():
                    raise _Invalid(
                        "messages: final assistant content cannot end with trailing whitespace"
                    )
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(items)
        else:
            turns.append((role, items))

    # tool_use / tool_result pairing, on merged turns
    seen_ids: set[str] = set()
    for t, (role, items) in enumerate(turns):
        if role == "assistant":
            ids: list[str] = []
            for i, j, b in items:
                if b["type"] == "tool_use":
                    if b["id"] in seen_ids:
                        raise _Invalid(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                    seen_ids.add(b["id"])
                    ids.append(b["id"])
            if ids:
                nxt = turns[t + 1][1] if t + 1 < len(turns) else []
                answered = {b.get("tool_use_id") for _, _, b in nxt if b["type"] == "tool_result"}
                missing = [x for x in ids if x not in answered]
                if missing:
                    at = nxt[0][0] if nxt else items[-1][0]
                    raise _Invalid(
                        f"messages.{at}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                        "corresponding `tool_result` block in the next message."
                    )
        else:
            prev_ids: set[str] = set()
            if t > 0:
                prev_ids = {b["id"] for _, _, b in turns[t - 1][1] if b["type"] == "tool_use"}
            answered_here: set[str] = set()
            other_seen = False
            for i, j, b in items:
                if b["type"] != "tool_result":
                    other_seen = True
                    continue
                tid = b["tool_use_id"]
                if tid not in prev_ids:
                    raise _Invalid(
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {tid}. Each `tool_result` block must have a corresponding "
                        "`tool_use` block in the previous message."
                    )
                if tid in answered_here:
                    raise _Invalid(
                        f"messages.{i}.content.{j}: each `tool_use` must have a single result. "
                        f"Found multiple `tool_result` blocks with id: {tid}"
                    )
                answered_here.add(tid)
                if other_seen:
                    raise _Invalid(
                        f"messages.{i}.content.{j}: `tool_result` blocks must come first in the "
                        "user message content, before any other content blocks"
                    )

    if thinking_enabled and len(turns) >= 2 and turns[-1][0] == "user":
        last_user = turns[-1][1]
        prev_role, prev_items = turns[-2]
        if prev_role == "assistant" and any(b["type"] == "tool_result" for _, _, b in last_user):
            first = prev_items[0][2]["type"] if prev_items else "nothing"
            if first not in ("thinking", "redacted_thinking"):
                at = prev_items[0][0] if prev_items else 0
                raise _Invalid(
                    f"messages.{at}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                    f"found `{first}`. When `thinking` is enabled, a final `assistant` message must "
                    "start with a thinking block (preceding the lastmost set of `tool_use` and "
                    "`tool_result` blocks). To avoid this requirement, disable `thinking`."
                )

    if cache_blocks > MAX_CACHE_CONTROL_BLOCKS:
        raise _Invalid(
            f"A maximum of {MAX_CACHE_CONTROL_BLOCKS} blocks with cache_control may be provided. "
            f"Found {cache_blocks}."
        )


def validate_request(body: Any, *, count_tokens: bool = False) -> str | None:
    """Return the real-API-style 400 message for an invalid Messages request, else None."""
    try:
        _validate(body, count_tokens)
    except _Invalid as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------------------
# prompt caching


def _without_cache_control(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    out = {k: v for k, v in block.items() if k != "cache_control"}
    if out.get("type") == "tool_result" and isinstance(out.get("content"), list):
        out["content"] = [_without_cache_control(b) for b in out["content"]]
    return out


def _marks_breakpoint(block: Any) -> bool:
    if _has_cache_control(block):
        return True
    if isinstance(block, dict) and block.get("type") == "tool_result":
        inner = block.get("content")
        return isinstance(inner, list) and any(_has_cache_control(b) for b in inner)
    return False


def _cache_segments(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request in cache order (model, tools, system, messages) as serialized pieces, each
    with whether a cache_control breakpoint ends there.  Key order is kept as sent."""

    def ser(obj: Any) -> str:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)

    segments: list[tuple[str, bool]] = [(ser({"model": body.get("model")}), False)]
    for tool in body.get("tools") or []:
        segments.append((ser(_without_cache_control(tool)), _has_cache_control(tool)))
    system = body.get("system")
    if isinstance(system, str):
        segments.append((ser(system), False))
    elif isinstance(system, list):
        for block in system:
            segments.append((ser(_without_cache_control(block)), _has_cache_control(block)))
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        segments.append((ser({"role": message.get("role")}), False))
        content = message.get("content")
        if isinstance(content, str):
            segments.append((ser(content), False))
        elif isinstance(content, list):
            for block in content:
                segments.append((ser(_without_cache_control(block)), _marks_breakpoint(block)))
    return segments


def cache_prefixes(body: dict[str, Any]) -> list[str]:
    """What the cache keys on at each breakpoint of the request, in order: the serialized
    request (see :func:`_cache_segments`) up to and including the block marked cache_control."""
    out: list[str] = []
    pieces: list[str] = []
    for piece, breakpoint in _cache_segments(body):
        pieces.append(piece)
        if breakpoint:
            out.append("".join(pieces))
    return out


def cache_prefix_problem(previous: dict[str, Any], current: dict[str, Any]) -> str | None:
    """None when ``current`` reads the cache ``previous`` wrote: ``current`` has a breakpoint at
    exactly the bytes of ``previous``'s last breakpoint.  Otherwise, what is wrong."""
    before = cache_prefixes(previous)
    if not before:
        return "the previous request has no cache_control breakpoint"
    target = before[-1]
    now = cache_prefixes(current)
    if target in now:
        return None
    full = "".join(piece for piece, _ in _cache_segments(current))
    if not full.startswith(target):
        at = next(
            (k for k, (a, b) in enumerate(zip(target, full, strict=False)) if a != b),
            min(len(target), len(full)),
        )
        return (
            f"the previous request's last cached prefix ({len(target)} characters) differs from "
            f"this request at character {at}: before {target[max(0, at - 60) : at + 60]!r}, "
            f"now {full[max(0, at - 60) : at + 60]!r}"
        )
    return (
        f"this request starts with the previous request's last cached prefix ({len(target)} "
        f"characters) but has no breakpoint there (its breakpoints end at "
        f"{[len(p) for p in now]})"
    )


# --------------------------------------------------------------------------------------
# rendering


def estimate_input_tokens(body: dict[str, Any]) -> int:
    """Deterministic size estimate: len(json([system, messages, tools])) // 4 (at least 1)."""
    payload = json.dumps(
        [body.get("system"), body.get("messages"), body.get("tools")],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return max(1, len(payload) // 4)


def _estimate_output_tokens(blocks: Sequence[Block]) -> int:
    n = 0
    for b in blocks:
        if isinstance(b, Text):
            n += len(b.text)
        elif isinstance(b, ToolUse):
            n += len(b.input_json if b.input_json is not None else json.dumps(b.input))
        elif isinstance(b, Thinking):
            n += len(b.thinking)
    return max(1, n // 4)


def _pieces(s: str, chunk_size: int | None) -> list[str]:
    if not s:
        return []
    n = chunk_size if chunk_size and chunk_size > 0 else max(1, math.ceil(len(s) / 3))
    return [s[k : k + n] for k in range(0, len(s), n)]


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _frame(obj: dict[str, Any]) -> bytes:
    return b"event: " + str(obj["type"]).encode() + b"\ndata: " + _dumps(obj) + b"\n\n"


def _content_json(b: Block) -> dict[str, Any]:
    return _block_to_json(b) if not isinstance(b, ToolUse) else {
        "type": "tool_use", "id": b.id, "name": b.name, "input": b.input,
    }  # fmt: skip


@dataclass
class _Rendered:
    message: dict[str, Any]  # final Message JSON (non-streaming)
    usage: dict[str, Any]


def _render(
    spec: Reply,
    body: dict[str, Any],
    message_id: str,
    cache_usage: dict[str, int] | None = None,
) -> _Rendered:
    usage: dict[str, Any] = {
        "input_tokens": estimate_input_tokens(body),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": _estimate_output_tokens(spec.blocks),
    }
    usage.update(cache_usage or {})
    usage.update(spec.usage)
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": spec.model or body.get("model") or "claude-test",
        "content": [_content_json(b) for b in spec.blocks],
        "stop_reason": spec.effective_stop_reason,
        "stop_sequence": spec.stop_sequence,
        "usage": usage,
    }
    return _Rendered(message, usage)


def _sse_frames(spec: Reply, rendered: _Rendered) -> list[bytes]:
    msg = rendered.message
    usage = rendered.usage
    start_usage = {k: v for k, v in usage.items() if k != "output_tokens"}
    start_usage["output_tokens"] = min(1, int(usage.get("output_tokens", 1)))
    frames = [
        _frame(
            {
                "type": "message_start",
                "message": {
                    **msg,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            }
        )
    ]
    if spec.ping:
        frames.append(b'event: ping\ndata: {"type":"ping"}\n\n')
    cs = spec.chunk_size
    for idx, b in enumerate(spec.blocks):
        head = (
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,"delta":'
            % idx
        )
        if isinstance(b, Text):
            frames.append(
                _frame(
                    {
                        "type": "content_block_start",
                        "index": idx,
                        "content_block": {"type": "text", "text": ""},
                    }
                )
            )
            pre = head + b'{"type":"text_delta","text":'
            frames.extend(pre + _dumps(p) + b"}}\n\n" for p in _pieces(b.text, cs))
        elif isinstance(b, ToolUse):
            frames.append(
                _frame(
                    {
                        "type": "content_block_start",
                        "index": idx,
                        "content_block": {
                            "type": "tool_use",
                            "id": b.id,
                            "name": b.name,
                            "input": {},
                        },
                    }
                )
            )
            raw = b.input_json if b.input_json is not None else json.dumps(b.input)
            pre = head + b'{"type":"input_json_delta","partial_json":'
            frames.extend(pre + _dumps(p) + b"}}\n\n" for p in ["", *_pieces(raw, cs)])
        elif isinstance(b, Thinking):
            frames.append(
                _frame(
                    {
                        "type": "content_block_start",
                        "index": idx,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    }
                )
            )
            pre = head + b'{"type":"thinking_delta","thinking":'
            frames.extend(pre + _dumps(p) + b"}}\n\n" for p in _pieces(b.thinking, cs))
            frames.append(
                head + b'{"type":"signature_delta","signature":' + _dumps(b.signature) + b"}}\n\n"
            )
        else:
            frames.append(
                _frame(
                    {
                        "type": "content_block_start",
                        "index": idx,
                        "content_block": {"type": "redacted_thinking", "data": b.data},
                    }
                )
            )
        frames.append(
            b'event: content_block_stop\ndata: {"type":"content_block_stop","index":%d}\n\n' % idx
        )
    frames.append(
        _frame(
            {
                "type": "message_delta",
                "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": msg["stop_sequence"]},
                "usage": usage,
            }
        )
    )
    frames.append(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
    return frames


# --------------------------------------------------------------------------------------
# server


@dataclass
class RecordedRequest:
    """One HTTP request seen by the server (bodies are parsed JSON, headers lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 200
    rejected: bool = False  # refused by auth/validation/JSON parsing (no reply consumed)
    error: str | None = None  # the error message sent, if any
    stream: bool = False
    reply: ReplySpec | None = None  # the scripted reply used, if any
    request_id: str = ""
    disconnected: bool = False  # client went away before the response was complete
    # Streams, as time.time() (comparable across processes, for latency measurements): when a
    # held stream went on (just before its next event was written), and when its last byte was.
    resumed_at: float | None = None
    finished_at: float | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "status": self.status,
            "rejected": self.rejected,
            "error": self.error,
            "stream": self.stream,
            "request_id": self.request_id,
            "resumed_at": self.resumed_at,
            "finished_at": self.finished_at,
        }


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128
    api: MessagesAPIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError | ValueError):  # disconnects, closed sockets at shutdown
            return
        super().handle_error(request, client_address)


_WRITE_CHUNK = 64 * 1024


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    # -- plumbing -------------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        try:  # headers and body are separate writes: avoid Nagle + delayed-ACK 40 ms stalls
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        self.server.api._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.api._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.api.verbose:
            sys.stderr.write("messages_api: " + (format % args) + "\n")

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _send_json(
        self, status: int, obj: Any, rid: str, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", rid)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, rec: RecordedRequest, err: ErrorReply, *, rejected: bool) -> None:
        rec.status = err.status
        rec.error = err.message
        rec.rejected = rejected
        self.server.api._record(rec)
        self._send_json(err.status, err.body(rec.request_id), rec.request_id, err.headers)

    def _peer_closed(self) -> bool:
        try:
            data = self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            return True
        return bool(data == b"")

    def _pause(
        self, rec: RecordedRequest, seconds: float | None, event: threading.Event | None
    ) -> bool:
        """Wait ``seconds`` or until ``event`` is set. False if the client left or we stop."""
        api = self.server.api
        deadline = None if seconds is None else time.monotonic() + seconds
        if event is not None:
            api._holding(event, add=True)
        try:
            return self._pause_loop(rec, api, deadline, event)
        finally:
            if event is not None:
                api._holding(event, add=False)

    def _pause_loop(
        self,
        rec: RecordedRequest,
        api: MessagesAPIServer,
        deadline: float | None,
        event: threading.Event | None,
    ) -> bool:
        while True:
            if event is not None and event.is_set():
                return True
            if api._closing.is_set():
                return False
            step = 0.02
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                step = min(step, remaining)
            try:
                readable, _, _ = select.select([self.connection], [], [], step)
            except (OSError, ValueError):
                rec.disconnected = True
                return False
            if readable:
                if self._peer_closed():
                    rec.disconnected = True
                    return False
                time.sleep(step)  # pipelined data; nothing to do but wait

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- HTTP methods -----------------------------------------------------------------
    def do_GET(self) -> None:
        rid = _new_request_id()
        path = urlsplit(self.path).path
        if path in ("/", "/health"):
            self._send_json(200, {"ok": True}, rid)
        elif path.startswith("/_test/"):
            self._control(self.server.api, path, b"")
        else:
            err = error(404, "not_found_error", f"Not found: {self.command} {path}")
            self._send_json(404, err.body(rid), rid)

    def do_POST(self) -> None:
        api = self.server.api
        raw = self._read_body()
        path = urlsplit(self.path).path
        if path.startswith("/_test/"):
            self._control(api, path, raw)
            return
        rid = _new_request_id()
        headers = {k.lower(): v for k, v in self.headers.items()}
        rec = RecordedRequest(self.command, path, headers, None, request_id=rid)
        try:
            self._handle_post(api, rec, raw)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            rec.disconnected = True
            self.close_connection = True
        finally:
            rec.done.set()

    def _control(self, api: MessagesAPIServer, path: str, raw: bytes) -> None:
        """Test-process hooks for subprocess mode (not recorded)."""
        rid = _new_request_id()
        try:
            if path == "/_test/enqueue":
                data = json.loads(raw.decode("utf-8"))
                items = data if isinstance(data, list) else [data]
                api.enqueue(*[reply_from_json(x) for x in items])
                self._send_json(200, {"pending": api.pending}, rid)
            elif path == "/_test/release":
                self._send_json(200, {"released": api.release_holds()}, rid)
            elif path == "/_test/requests":
                self._send_json(200, [r.to_json() for r in api.all_requests], rid)
            elif path == "/_test/clear":
                api.clear()
                self._send_json(200, {"cleared": True}, rid)
            else:
                self._send_json(404, error(404, "not_found_error", path).body(rid), rid)
        except (ValueError, KeyError, TypeError) as exc:
            self._send_json(400, error(400, "invalid_request_error", repr(exc)).body(rid), rid)

    def _handle_post(self, api: MessagesAPIServer, rec: RecordedRequest, raw: bytes) -> None:
        path = rec.path
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._send_error(
                rec, error(404, "not_found_error", f"Not found: POST {path}"), rejected=True
            )
            return
        if api.strict_auth:
            # This SDK build sends api_key as "Authorization: Bearer <key>"; older ones as x-api-key.
            key = rec.headers.get("x-api-key")
            auth = rec.headers.get("authorization", "")
            if not key and auth[:7].lower() == "bearer ":
                key = auth[7:].strip()
            if not key:
                self._send_error(
                    rec,
                    error(401, "authentication_error", "x-api-key header is required"),
                    rejected=True,
                )
                return
            if api.api_key is not None and key != api.api_key:
                self._send_error(
                    rec, error(401, "authentication_error", "invalid x-api-key"), rejected=True
                )
                return
        try:
            rec.body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._send_error(
                rec,
                error(400, "invalid_request_error", f"Request body is not valid JSON: {exc}"),
                rejected=True,
            )
            return
        body = rec.body
        count_tokens = path.endswith("/count_tokens")
        rec.stream = bool(isinstance(body, dict) and body.get("stream") is True)
        if api.validate:
            problem = None
            if "anthropic-version" not in rec.headers:
                problem = "anthropic-version: header is required"
            problem = problem or validate_request(body, count_tokens=count_tokens)
            if problem is not None:
                self._send_error(rec, error(400, "invalid_request_error", problem), rejected=True)
                return
        if not isinstance(body, dict):
            self._send_error(
                rec,
                error(400, "invalid_request_error", "Request body must be a JSON object"),
                rejected=True,
            )
            return
        if count_tokens:
            api._record(rec)
            self._send_json(200, {"input_tokens": estimate_input_tokens(body)}, rec.request_id)
            return

        try:
            spec = api._next_reply(body)
        except Exception as exc:  # a failing callable reply: surface it as a 500
            self._send_error(
                rec, error(500, "api_error", f"scripted reply raised {exc!r}"), rejected=False
            )
            return
        rec.reply = spec
        if isinstance(spec, ErrorReply):
            self._send_error(rec, spec, rejected=False)
            return
        api._record(rec)
        if spec.reset:
            rec.disconnected = True
            self.close_connection = True
            try:  # linger 0: close() sends RST instead of FIN
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
            except OSError:
                pass
            return
        cache_usage = api._cache_usage(body) if api.simulate_cache else None
        if rec.stream:
            self._stream(rec, spec, body, cache_usage)
        else:
            self._respond(rec, spec, body, cache_usage)

    def _respond(
        self,
        rec: RecordedRequest,
        spec: Reply,
        body: dict[str, Any],
        cache_usage: dict[str, int] | None = None,
    ) -> None:
        if spec.delay_s and not self._pause(rec, spec.delay_s, None):
            self._drop()
            return
        if spec.hold is not None and not self._pause(rec, None, spec.hold):
            self._drop()
            return
        if spec.cut_after is not None:
            self._drop()
            return
        rendered = _render(spec, body, spec.id or _new_message_id(), cache_usage)
        self._send_json(200, rendered.message, rec.request_id)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))

    def _stream(
        self,
        rec: RecordedRequest,
        spec: Reply,
        body: dict[str, Any],
        cache_usage: dict[str, int] | None = None,
    ) -> None:
        frames = _sse_frames(spec, _render(spec, body, spec.id or _new_message_id(), cache_usage))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", rec.request_id)
        self.end_headers()

        slow = (spec.delay_s > 0 or spec.hold is not None or spec.cut_after is not None
                or spec.error_event is not None or spec.garbage is not None)  # fmt: skip
        if not slow:
            blob = b"".join(frames)
            for k in range(0, len(blob), _WRITE_CHUNK):
                self._write_chunk(blob[k : k + _WRITE_CHUNK])
            self.wfile.write(b"0\r\n\r\n")
            rec.finished_at = time.time()
            return

        preamble = 2 if spec.ping else 1
        hold_at = spec.hold_after if spec.hold_after is not None else preamble
        error_at = spec.error_after if spec.error_after is not None else preamble
        garbage_at = spec.garbage_after if spec.garbage_after is not None else preamble
        for n in range(len(frames) + 1):
            if spec.garbage is not None and n == garbage_at:
                self._write_chunk(spec.garbage)
            if spec.cut_after is not None and n == spec.cut_after:
                self._drop()
                return
            if spec.error_event is not None and n == error_at:
                ev = spec.error_event
                self._write_chunk(
                    _frame({"type": "error", "error": {"type": ev.type, "message": ev.message}})
                )
                break
            if spec.hold is not None and n == hold_at:
                if not self._pause(rec, None, spec.hold):
                    self._drop()
                    return
                rec.resumed_at = time.time()
            if n == len(frames):
                break
            if spec.delay_s > 0 and n > 0 and not self._pause(rec, spec.delay_s, None):
                self._drop()
                return
            self._write_chunk(frames[n])
        if spec.cut_after is not None and spec.cut_after > len(frames):
            self._drop()  # everything sent but the terminating chunk
            return
        self.wfile.write(b"0\r\n\r\n")
        rec.finished_at = time.time()


_DEFAULT_REPLY = Reply(blocks=[Text("(no scripted reply)")])


class MessagesAPIServer:
    """Messages API test double on 127.0.0.1 in a background thread; see the module doc.

    Args:
        replies: initial FIFO contents (same as calling :meth:`enqueue`).
        default: answer used when the queue is empty (a ReplyLike; callables are called per
            request).  Defaults to an end_turn text reply ``"(no scripted reply)"``.
        validate: reject invalid requests with 400 invalid_request_error like the real API.
        strict_auth: require a key (401 authentication_error otherwise) in ``x-api-key`` or
            ``Authorization: Bearer`` (which is how this SDK build sends ``api_key``); if
            ``api_key`` is given, the key must also match.
        record_path: append each recorded request as a JSON line to this file.
        simulate_cache: report cache reads and writes in usage from the cache_control
            breakpoints of the requests seen so far (see the module doc).
    """

    def __init__(
        self,
        replies: Iterable[ReplyLike] = (),
        *,
        default: ReplyLike | None = None,
        validate: bool = True,
        strict_auth: bool = False,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record_path: str | Path | None = None,
        verbose: bool = False,
        simulate_cache: bool = False,
    ) -> None:
        self.default: ReplyLike = default if default is not None else _DEFAULT_REPLY
        self.validate = validate
        self.strict_auth = strict_auth
        self.api_key = api_key
        self.verbose = verbose
        self.simulate_cache = simulate_cache
        self._cache: set[str] = set()  # digests of the breakpoint prefixes seen
        self.record_path = Path(record_path) if record_path is not None else None
        self._host = host
        self._port = port
        self._queue: deque[ReplyLike] = deque(replies)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._requests: list[RecordedRequest] = []
        self._all: list[RecordedRequest] = []
        self._conns: set[socket.socket] = set()
        self._holds: list[threading.Event] = []  # events streams are stalled on now
        self._closing = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> Self:
        if self._httpd is not None:
            return self
        httpd = _HTTPServer((self._host, self._port), _Handler)
        httpd.api = self
        self._httpd = httpd
        self._closing.clear()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01},
            name="messages-api-server", daemon=True,
        )  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd = self._httpd
        if httpd is None:
            return
        self._closing.set()
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    close = stop

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    # -- script -------------------------------------------------------------------------
    def enqueue(self, *replies: ReplyLike) -> None:
        """Append replies to the FIFO (one is consumed per accepted /v1/messages request)."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Number of scripted replies not consumed yet."""
        with self._lock:
            return len(self._queue)

    def _next_reply(self, body: dict[str, Any]) -> ReplySpec:
        with self._lock:
            item = self._queue.popleft() if self._queue else self.default
        if callable(item) and not isinstance(item, Reply | ErrorReply):
            item = item(body)
        if isinstance(item, str):
            return reply(text(item))
        if not isinstance(item, Reply | ErrorReply):
            raise TypeError(f"reply must be Reply, ErrorReply or str, got {type(item).__name__}")
        return item

    def _cache_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Usage cache fields for this request, and remember its prefixes (see module doc)."""
        segments = _cache_segments(body)
        total = sum(len(piece) for piece, _ in segments)
        digests = [
            (len(p), hashlib.sha256(p.encode("utf-8", "surrogatepass")).hexdigest())
            for p in cache_prefixes(body)
        ]
        with self._lock:
            read = max((n for n, d in digests if d in self._cache), default=0)
            self._cache.update(d for _, d in digests)
        last = digests[-1][0] if digests else 0
        write = max(0, last - read)
        rest = total - max(read, last)
        return {
            "input_tokens": rest // 4,
            "cache_read_input_tokens": read // 4,
            "cache_creation_input_tokens": write // 4,
        }

    def release_holds(self) -> int:
        """Set every ``hold`` event a stream is currently stalled on; returns how many."""
        with self._lock:
            events = list(self._holds)
        for ev in events:
            ev.set()
        return len(events)

    def _holding(self, event: threading.Event, *, add: bool) -> None:
        with self._lock:
            if add:
                self._holds.append(event)
            else:
                self._holds.remove(event)

    # -- recording ----------------------------------------------------------------------
    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _record(self, rec: RecordedRequest) -> None:
        with self._cond:
            self._all.append(rec)
            if rec.path == "/v1/messages":
                self._requests.append(rec)
            if self.record_path is not None:
                with self.record_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(rec.to_json()) + "\n")
            self._cond.notify_all()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of recorded ``POST /v1/messages`` requests (including rejected ones)."""
        with self._lock:
            return list(self._requests)

    @property
    def all_requests(self) -> list[RecordedRequest]:
        """Snapshot of every recorded request, any path (count_tokens, 404s...)."""
        with self._lock:
            return list(self._all)

    @property
    def bodies(self) -> list[Any]:
        """Bodies of :attr:`requests`."""
        return [r.body for r in self.requests]

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least ``n`` /v1/messages requests were recorded; TimeoutError if not."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(
                    f"expected {n} requests within {timeout}s, got {len(self._requests)}"
                )
            return list(self._requests)

    def clear(self) -> None:
        """Forget recorded requests and queued replies."""
        with self._lock:
            self._requests.clear()
            self._all.clear()
            self._queue.clear()
            self._cache.clear()


# --------------------------------------------------------------------------------------
# subprocess mode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.messages_api",
        description="Serve a scripted Anthropic Messages API; prints 'READY <url>' when listening.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: list of replies or {replies, default}")
    parser.add_argument("--record", help="append each request as a JSON line to this file")
    parser.add_argument(
        "--strict-auth", action="store_true", help="require x-api-key or Authorization: Bearer"
    )
    parser.add_argument("--api-key", help="with --strict-auth: the only accepted key")
    parser.add_argument("--no-validate", action="store_true", help="accept invalid requests")
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    parser.add_argument(
        "--simulate-cache", action="store_true", help="report cache reads/writes in usage"
    )
    args = parser.parse_args(argv)

    replies: list[ReplySpec] = []
    default: ReplySpec | None = None
    if args.script:
        replies, default = load_script(args.script)
    srv = MessagesAPIServer(
        replies,
        default=default,
        validate=not args.no_validate,
        strict_auth=args.strict_auth,
        api_key=args.api_key,
        host=args.host,
        port=args.port,
        record_path=args.record,
        verbose=args.verbose,
        simulate_cache=args.simulate_cache,
    )
    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    srv.start()
    try:
        print(f"READY {srv.url}", flush=True)
        while not stop.wait(0.2):
            pass
    finally:
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
