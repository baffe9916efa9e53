"""A reply rendered as the real API sends it: the Message JSON of a plain answer, and the SSE
frames of a stream (``message_start``, ``ping``, per block ``content_block_start`` /
``content_block_delta``... / ``content_block_stop``, then ``message_delta`` and
``message_stop``), with usage estimated from the sizes of request and reply."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from messages_api.replies import Block, ErrorReply, Reply, Text, Thinking, ToolUse


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
    if isinstance(b, Text):
        return {"type": "text", "text": b.text}
    if isinstance(b, ToolUse):
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
    if isinstance(b, Thinking):
        return {"type": "thinking", "thinking": b.thinking, "signature": b.signature}
    return {"type": "redacted_thinking", "data": b.data}


def render_message(
    spec: Reply,
    body: dict[str, Any],
    message_id: str,
    cache_usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The Message JSON answering ``body`` with ``spec``: usage is estimated, then overridden by
    ``cache_usage`` (a simulated prompt cache) and by the reply's own ``usage``."""
    usage: dict[str, Any] = {
        "input_tokens": estimate_input_tokens(body),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": _estimate_output_tokens(spec.blocks),
    }
    usage.update(cache_usage or {})
    usage.update(spec.usage)
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": spec.model or body.get("model") or "claude-test",
        "content": [_content_json(b) for b in spec.blocks],
        "stop_reason": spec.effective_stop_reason,
        "stop_sequence": spec.stop_sequence,
        "usage": usage,
    }


def error_frame(ev: ErrorReply) -> bytes:
    """The SSE ``event: error`` the real API sends when a stream fails midway."""
    return _frame({"type": "error", "error": {"type": ev.type, "message": ev.message}})


def sse_frames(spec: Reply, msg: dict[str, Any]) -> list[bytes]:
    """The events that stream ``msg`` (from :func:`render_message`), one SSE frame each, in order
    (positions in this list are what ``cut_after``, ``hold_after``... count)."""
    usage = msg["usage"]
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
