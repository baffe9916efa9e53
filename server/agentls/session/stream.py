"""Stream folding: one step's provider events become the parts of its assistant message.

Plain code, no I/O: the turn feeds each event to a StreamFolder and acts on what it returns (a
delta to show, a finished block to store and announce); a RetryNotice is the turn's to handle
(it voids the step and calls reset()).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentls.history import (
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolPart,
    clean_json,
    clean_text,
    new_id,
)
from agentls.model.base import (
    BlockStart,
    BlockStop,
    MessageBegin,
    MessageEnd,
    SignatureDelta,
    StepUsage,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)

# The title of a tool call, from its tool's name and input.
TitleOf = Callable[[str, dict[str, Any]], str]


@dataclass
class StreamedText:
    """A text or thinking delta to show as it arrives."""

    kind: Literal["text", "thinking"]
    text: str


@dataclass
class FinishedBlock:
    """A block the stream closed: its part is complete (a tool call's input parsed)."""

    part: Part


class StreamFolder:
    """The parts of one step's assistant message, built from the provider's events."""

    def __init__(self, message: Message, title_of: TitleOf) -> None:
        self.message = message
        self.title_of = title_of
        self.streaming: dict[int, Part] = {}  # block index -> its part
        self.tool_json: dict[int, list[str]] = {}
        self.text_chunks: dict[int, list[str]] = {}  # raw deltas, cleaned when joined
        self.finished: set[int] = set()
        self.stop_reason: str | None = None
        self.begin_usage: StepUsage | None = None
        self.end_usage: StepUsage | None = None

    def fold(self, event: StreamEvent) -> StreamedText | FinishedBlock | None:
        if isinstance(event, TextDelta | ThinkingDelta):
            part = self.streaming.get(event.index)
            kind = TextPart if isinstance(event, TextDelta) else ThinkingPart
            if type(part) is kind:
                self.text_chunks.setdefault(event.index, []).append(event.text)
                return StreamedText("text" if kind is TextPart else "thinking", event.text)
        elif isinstance(event, ToolInputDelta):
            self.tool_json.setdefault(event.index, []).append(event.partial_json)
        elif isinstance(event, SignatureDelta):
            part = self.streaming.get(event.index)
            if isinstance(part, ThinkingPart):
                part.signature = (part.signature or "") + event.signature
        elif isinstance(event, BlockStart):
            self.start(event)
        elif isinstance(event, BlockStop):
            self.flush_text(event.index)
            done = self.finish(event.index)
            if done is not None:
                return FinishedBlock(done)
        elif isinstance(event, MessageBegin):
            self.begin_usage = event.usage
        elif isinstance(event, MessageEnd):
            self.stop_reason = event.stop_reason
            self.end_usage = event.usage
        return None

    def start(self, event: BlockStart) -> None:
        new_part: Part
        if event.kind == "text":
            new_part = TextPart(text="")
        elif event.kind == "thinking":
            new_part = ThinkingPart(text="", data=event.data)
        else:
            new_part = ToolPart(
                call_id=event.tool_id or new_id("toolu"),
                tool=clean_text(event.tool_name or ""),
                input={},
            )
            self.tool_json[event.index] = []
        self.streaming[event.index] = new_part
        self.message.parts.append(new_part)

    def flush_text(self, index: int | None = None) -> None:
        """Move streamed text into its part. Deltas are kept as chunks while streaming: growing a
        string on a pydantic model at every delta costs quadratic time on long answers."""
        indexes = list(self.text_chunks) if index is None else [index]
        for i in indexes:
            chunks = self.text_chunks.pop(i, None)
            part = self.streaming.get(i)
            if chunks and isinstance(part, TextPart | ThinkingPart):
                part.text = part.text + clean_text("".join(chunks))

    def finish(self, index: int) -> Part | None:
        """The block at `index` closed: a tool call's input is parsed (or the call marked as an
        error that nothing runs) and titled."""
        part = self.streaming.get(index)
        if part is None:
            return None
        self.finished.add(index)
        if isinstance(part, ToolPart):
            raw = "".join(self.tool_json.get(index, []))
            try:
                parsed = json.loads(raw) if raw.strip() else {}
                if not isinstance(parsed, dict):
                    raise ValueError("the input must be a JSON object")
                part.input = clean_json(parsed)
            except ValueError as exc:
                part.status = "error"
                part.output = (
                    f"Your input for {part.tool} was not valid JSON ({exc}); nothing was run."
                )
            part.title = self.title_of(part.tool, part.input)
        return part

    def unfinished(self) -> list[Part]:
        """The parts whose block the stream never closed."""
        return [p for i, p in self.streaming.items() if i not in self.finished]

    def drop_unfinished_tools(self) -> None:
        """Remove the tool calls the stream never closed (max_tokens inside a tool call, a
        failure, a cancel): a tool_use with half its input can be neither run nor sent back."""
        for part in self.unfinished():
            if isinstance(part, ToolPart) and any(p is part for p in self.message.parts):
                self.message.parts.remove(part)

    def reset(self) -> None:
        """A retry: whatever the step streamed is void."""
        self.message.parts.clear()
        self.streaming = {}
        self.text_chunks = {}
        self.tool_json = {}
        self.finished = set()
