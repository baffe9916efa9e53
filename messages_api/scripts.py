"""Replies as JSON, for a server in another process: one reply to and from JSON, and the script
files ``python -m messages_api --script FILE`` reads (:func:`load_script`, :func:`write_script`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from messages_api.replies import (
    Block,
    ErrorReply,
    RedactedThinking,
    Reply,
    ReplySpec,
    Text,
    Thinking,
    ToolUse,
    error,
    reply,
    text,
    tool_use,
)


def block_from_json(obj: Any) -> Block:
    """One content block of a script (a bare string is a text block)."""
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


def block_to_json(b: Block) -> dict[str, Any]:
    """Inverse of :func:`block_from_json`."""
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
        blocks=[block_from_json(b) for b in obj.get("blocks", [])],
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
    out: dict[str, Any] = {"blocks": [block_to_json(b) for b in spec.blocks]}
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
