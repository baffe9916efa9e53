"""Scripted Chat Completions replies as plain data, and the builders tests write them with
(``reply("Let me look.", tool_call("read", {"path": "a.py"}))``)."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

_B62 = string.ascii_letters + string.digits
_rng = random.SystemRandom()


def random_id(prefix: str) -> str:
    return prefix + "".join(_rng.choices(_B62, k=24))


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: random_id("call_"))
    # Sent instead of json.dumps(arguments) when set (e.g. malformed JSON).
    raw_arguments: str | None = None

    @property
    def arguments_json(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments)


@dataclass
class Reply:
    """One assistant message, streamed as chunks.

    * ``reasoning``: sent first as ``delta.reasoning_content`` (what DeepSeek, vLLM and llama.cpp
      send; ``reasoning_field="reasoning"`` sends it as Ollama and OpenRouter do);
    * ``fragments``: how many pieces each tool call's arguments are cut into (the id and name
      come in the first); calls are interleaved when there are several;
    * ``finish_reason``: default ``tool_calls`` when there are calls, else ``stop``;
    * ``usage``: the last chunk's (``stream_options.include_usage``); by default estimated;
    * ``delay_s``: wait this long before each chunk after the first (a slow model);
    * ``cut_after``: drop the connection after that many chunks (no ``[DONE]``);
    * ``error_after``: send an error object after that many chunks and end the stream.
    """

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""
    reasoning_field: str = "reasoning_content"
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    chunk_size: int = 4
    fragments: int = 3
    delay_s: float = 0.0
    cut_after: int | None = None
    error_after: int | None = None
    error_message: str = "The server had an error while processing your request."

    @property
    def effective_finish_reason(self) -> str:
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


@dataclass
class ErrorReply:
    """An HTTP error in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""

    status: int
    message: str
    type: str = "invalid_request_error"
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": None, "code": None}}


ReplyLike: TypeAlias = (
    Reply | ErrorReply | str | Callable[[dict[str, Any]], "Reply | ErrorReply | str"]
)


def tool_call(
    name: str,
    arguments: dict[str, Any] | None = None,
    id: str | None = None,
    *,
    raw: str | None = None,
) -> ToolCall:
    return ToolCall(name, dict(arguments or {}), id or random_id("call_"), raw)


def reply(*items: str | ToolCall, reasoning: str = "", **options: Any) -> Reply:
    """Bare strings are the text (joined), ToolCalls the calls; options are Reply's fields."""
    text = "".join(i for i in items if isinstance(i, str))
    calls = [i for i in items if isinstance(i, ToolCall)]
    return Reply(text=text, tool_calls=calls, reasoning=reasoning, **options)


def error(
    status: int, message: str, type: str = "invalid_request_error", **headers: str
) -> ErrorReply:
    return ErrorReply(status, message, type, {k.replace("_", "-"): v for k, v in headers.items()})
