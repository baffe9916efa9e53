"""A session as Markdown (`agentls export`, agent/exportSession): its title, then each message
under a heading with its text, attachments, tool calls (input and output fenced) and, for a
compacted session, the summary. Thinking is left out; plain code, no I/O."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from agentls.history import (
    ContextPart,
    ImagePart,
    Message,
    SummaryPart,
    TextPart,
    ToolPart,
)
from agentls.store import SessionRecord


def _fence(body: str, lang: str = "") -> str:
    """body in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body.rstrip()}\n{ticks}"


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _part(part: Any) -> str | None:
    if isinstance(part, TextPart):
        return part.text.strip() or None
    if isinstance(part, SummaryPart):
        return f"**Summary of {part.summarized_messages} earlier messages**\n\n{part.text.strip()}"
    if isinstance(part, ContextPart):
        where = part.uri
        if part.range is not None:
            where += f" (lines {part.range.start.line + 1}-{part.range.end.line + 1})"
        return f"Attached: {where}" + (f"\n\n{_fence(part.text)}" if part.text else "")
    if isinstance(part, ImagePart):
        return f"Attached image: {part.uri or part.media_type}"
    if isinstance(part, ToolPart):
        head = f"**Tool `{part.tool}`** ({part.status})" + (f": {part.title}" if part.title else "")
        body = [head, _fence(json.dumps(part.input, indent=2, ensure_ascii=False), "json")]
        if part.output:
            body.append(_fence(part.output))
        return "\n\n".join(body)
    return None  # thinking


def session_markdown(record: SessionRecord, messages: list[Message]) -> str:
    """The session as a Markdown document."""
    lines = [
        f"# {record.title}",
        "",
        f"Session `{record.id}` · model `{record.model}` · started {_when(record.created_at)}",
    ]
    for message in messages:
        heading = "User" if message.role == "user" else "Assistant"
        if message.reverted:
            heading += " (reverted)"
        blocks = [text for text in map(_part, message.parts) if text]
        if message.error:
            blocks.append(f"Error: {message.error}")
        if not blocks:
            continue
        lines += ["", f"## {heading}", "", "\n\n".join(blocks)]
    return "\n".join(lines) + "\n"
