"""The conversation as the agent keeps it: messages made of typed parts, and their API form."""

from __future__ import annotations

import operator
import time
import uuid
from typing import Annotated, Any, Literal

from pydantic import Field

from agentls.wire import WireModel

ToolStatus = Literal["pending", "running", "completed", "error", "cancelled", "interrupted"]
FINISHED_TOOL_STATUSES: frozenset[str] = frozenset(
    {"completed", "error", "cancelled", "interrupted"}
)


def new_id(prefix: str) -> str:
    """A sortable unique id: prefix, a millisecond clock, then randomness."""
    return f"{prefix}_{int(time.time() * 1000):012x}{uuid.uuid4().hex[:12]}"


def now_ms() -> int:
    return int(time.time() * 1000)


class Position(WireModel):
    line: int
    character: int


class Range(WireModel):
    start: Position
    end: Position


class TextPart(WireModel):
    type: Literal["text"] = "text"
    text: str
    cancelled: bool | None = None


class ThinkingPart(WireModel):
    type: Literal["thinking"] = "thinking"
    text: str
    signature: str | None = None
    # Redacted thinking: the encrypted block the API sent instead of text (text is then empty).
    data: str | None = None


class ToolImage(WireModel):
    """An image a tool returned (an MCP server's), sent to the model after its text."""

    media_type: str  # image/png, image/jpeg, image/gif or image/webp
    data: str  # base64


class ToolPart(WireModel):
    type: Literal["tool"] = "tool"
    call_id: str
    tool: str
    input: dict[str, Any]
    status: ToolStatus = "pending"
    output: str | None = None
    title: str | None = None
    images: list[ToolImage] | None = None
    # A proposal of several hunks the user accepted in part: for each hunk, in order (file by
    # file), whether it was kept as proposed. None: not asked, or accepted or rejected whole.
    kept_hunks: list[bool] | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_TOOL_STATUSES

    @property
    def is_error(self) -> bool:
        return self.status in ("error", "cancelled", "interrupted")


class ContextPart(WireModel):
    type: Literal["context"] = "context"
    uri: str
    range: Range | None = None
    text: str | None = None


class ImagePart(WireModel):
    """An image the user attached to a prompt (pasted, or a file), sent as an image block."""

    type: Literal["image"] = "image"
    media_type: str  # image/png, image/jpeg, image/gif or image/webp
    data: str  # base64
    # The file it came from, when it came from one.
    uri: str | None = None


class SummaryPart(WireModel):
    """A compacted session's summary of its older history; it opens the history the model sees.

    It sits on a user message placed just before the oldest message kept after the compaction
    (the session's summary_message_id points at that message).
    """

    type: Literal["summary"] = "summary"
    text: str
    # How many messages it replaced.
    summarized_messages: int = 0
    # The newest message when the compaction ran: the usage recorded up to it measured the
    # context before the compaction, so it must not trigger another one.
    last_message_id: str | None = None


# What a prompt attaches besides its text.
Attachment = ContextPart | ImagePart

SUMMARY_INTRO = (
    "This session was compacted: the conversation before this point ran long and is replaced "
    "by the summary below. Continue from it; re-read files when you need their exact content."
)

Part = Annotated[
    TextPart | ThinkingPart | ToolPart | ContextPart | ImagePart | SummaryPart,
    Field(discriminator="type"),
]


class _RevertFlags:
    """How many times a message's `reverted` was set: while it stays the same, ApiHistory need
    not read the flag of every message again (5,000 attribute reads, cold in the CPU's caches
    after the SDK has built a request, are most of a step's conversion)."""

    changes = 0


_revert_flags = _RevertFlags()

FinishReason = Literal[
    "end_turn", "max_tokens", "refusal", "cancelled", "max_steps", "doom_loop", "error", "tool_use"
]


class Usage(WireModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    # Some of these tokens are estimated: a step stopped before the API reported its output.
    estimated: bool | None = None

    def add(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 8),
            estimated=True if self.estimated or other.estimated else None,
        )


class Message(WireModel):
    id: str
    session_id: str
    role: Literal["user", "assistant"]
    created_at: int
    parts: list[Part] = Field(default_factory=list)
    # Assistant messages only: why the step ended, and what it cost.
    finish_reason: FinishReason | None = None
    usage: Usage | None = None
    error: str | None = None
    # Reverted messages stay for the record but are no longer sent to the model.
    reverted: bool = False

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name == "reverted":
            _revert_flags.changes += 1

    def tool_parts(self) -> list[ToolPart]:
        return [p for p in self.parts if isinstance(p, ToolPart)]

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def summary(self) -> SummaryPart | None:
        """The summary part of a compaction summary message, else None."""
        for part in self.parts:
            if isinstance(part, SummaryPart):
                return part
        return None


def clean_text(text: str) -> str:
    """The text with every lone surrogate made visible, so it can be stored and sent as UTF-8.

    Lone surrogates reach Python strings from undecodable file names (surrogateescape) and from
    `\\udXXX` escapes in JSON that an editor or a model sent; SQLite, pydantic and the API all
    refuse them. An undecodable byte shows as \\xNN, any other lone surrogate as \\uXXXX.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def clean_json(value: Any) -> Any:
    """clean_text applied to every string (keys included) of a JSON value."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_json(v) for v in value]
    return value


def repair_interrupted(messages: list[Message]) -> list[ToolPart]:
    """Give every unfinished tool call a result so the history stays valid; returns what changed."""
    changed: list[ToolPart] = []
    for message in messages:
        for part in message.tool_parts():
            if not part.finished:
                part.status = "interrupted"
                part.output = "The tool call was interrupted before it finished (the agent stopped); its effects, if any, are unknown."
                changed.append(part)
    return changed


def _user_content(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text.strip():
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ContextPart):
            where = part.uri
            if part.range is not None:
                where += f" lines {part.range.start.line + 1}-{part.range.end.line + 1}"
            body = f'<context uri="{where}">\n{part.text or ""}\n</context>'
            blocks.append({"type": "text", "text": body})
        elif isinstance(part, ImagePart):
            source = {"type": "base64", "media_type": part.media_type, "data": part.data}
            blocks.append({"type": "image", "source": source})
        elif isinstance(part, SummaryPart):
            body = f"{SUMMARY_INTRO}\n\n<summary>\n{part.text}\n</summary>"
            blocks.append({"type": "text", "text": body})
    return blocks


def _assistant_content(message: Message) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The assistant blocks, and the tool_result blocks that must follow them."""
    blocks: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text.strip():
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ThinkingPart):
            # The API accepts thinking back only with its signature; a cut-off one is dropped.
            if part.data is not None:
                blocks.append({"type": "redacted_thinking", "data": part.data})
            elif part.signature:
                blocks.append(
                    {"type": "thinking", "thinking": part.text, "signature": part.signature}
                )
        elif isinstance(part, ToolPart):
            blocks.append(
                {"type": "tool_use", "id": part.call_id, "name": part.tool, "input": part.input}
            )
            output = part.output if part.output and part.output.strip() else "(no output)"
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": part.call_id,
                "content": output,
            }
            if part.images:
                result["content"] = [
                    {"type": "text", "text": output},
                    *(
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": image.media_type,
                                "data": image.data,
                            },
                        }
                        for image in part.images
                    ),
                ]
            if part.status != "completed":
                result["is_error"] = True
            results.append(result)
    return blocks, results


def to_api_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Convert the history to Messages-API form, merging tool results into the following user turn."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for message in messages:
        if not message.reverted:
            pending = _add_message(out, pending, message)
    if pending:
        _append_user(out, pending)
    return out


def _add_message(
    out: list[dict[str, Any]], pending: list[dict[str, Any]], message: Message
) -> list[dict[str, Any]]:
    """Add one (not reverted) message to `out`; returns the tool results still to be sent.

    Never changes a dict or list already in `out` (or `pending`): a merge replaces out[-1] with a
    longer copy, so an ApiHistory can hand out the same dicts at every step.
    """
    if message.role == "user":
        content = pending + _user_content(message)
        if content:
            _append_user(out, content)
        return []
    blocks, results = _assistant_content(message)
    if not blocks:
        return pending
    if pending:
        _append_user(out, pending)
    if out and out[-1]["role"] == "assistant":
        # Two assistant messages in a row (an empty user turn was skipped): keep them apart.
        _append_user(out, [{"type": "text", "text": "(continue)"}])
    out.append({"role": "assistant", "content": blocks})
    return results


def _append_user(out: list[dict[str, Any]], content: list[dict[str, Any]]) -> None:
    if out and out[-1]["role"] == "user":
        out[-1] = {"role": "user", "content": [*out[-1]["content"], *content]}
    else:
        out.append({"role": "user", "content": list(content)})


def _settled(message: Message) -> bool:
    """Whether the message's API form is final: every tool call of it has its result."""
    if message.role == "user":
        return True
    return all(part.finished for part in message.parts if isinstance(part, ToolPart))


_is = operator.is_
_eq = operator.eq
_reverted = operator.attrgetter("reverted")


class ApiHistory:
    """to_api_messages(messages) kept between the steps of a session: each call converts only
    the messages added or changed since the previous one, so a step of a long session does not
    convert thousands of messages again.

    Reused is the longest prefix of the list whose messages are the very objects converted last
    time, with the same `reverted` flag, each settled when it was converted (every tool call of
    it had its result). So appending messages, marking some reverted (revert), or replacing the
    list (compaction) is seen by itself. What is not seen is a change to the parts of a settled
    message already converted: the agent never makes one (a message streams, and its tool
    results arrive, before any step converts it), and code that does must call forget().

    The dicts returned are shared with later calls (that is the point) and must not be changed:
    model/caching.py puts its cache_control breakpoints on copies.
    """

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Drop everything: the next call converts the whole history."""
        # The messages converted (the reusable prefix only) and their reverted flags then.
        self._messages: list[Message] = []
        self._flags: list[bool] = []
        # After message i: len(out), len(out[-1]["content"]), the tool results pending.
        self._marks: list[tuple[int, int, list[dict[str, Any]]]] = []
        # Message.reverted assignments counted then (see _RevertFlags).
        self._revert_changes = -1
        # What the last call built, before its pending tool results were added (out[:n] is
        # the API form up to a mark, but for out[n - 1]'s content, which may have grown since).
        self._out: list[dict[str, Any]] = []

    def convert(self, messages: list[Message]) -> list[dict[str, Any]]:
        """The same list as to_api_messages(messages), converting only what changed."""
        keep = self._reusable(messages)
        if keep:
            out_len, last_len, pending = self._marks[keep - 1]
            out = self._out  # ours alone (callers get copies): cut back in place
            del out[out_len:]
            if out and len(out[-1]["content"]) != last_len:
                # A later message was merged into it: back to the content it had then.
                out[-1] = {**out[-1], "content": out[-1]["content"][:last_len]}
        else:
            out, pending = [], []
        del self._messages[keep:], self._flags[keep:], self._marks[keep:]
        self._revert_changes = _revert_flags.changes
        recording = True
        for message in messages[keep:]:
            reverted = message.reverted
            if not reverted:
                pending = _add_message(out, pending, message)
            if recording and _settled(message):
                self._messages.append(message)
                self._flags.append(reverted)
                self._marks.append((len(out), len(out[-1]["content"]) if out else 0, pending))
            else:
                recording = False
        self._out = out
        result = list(out)
        if pending:
            _append_user(result, pending)
        return result

    def _reusable(self, messages: list[Message]) -> int:
        """How many messages at the head of the list the previous conversion still holds."""
        known = self._messages
        keep = min(len(messages), len(known))
        # == compares identical items without calling __eq__: a loop in C.
        if messages[:keep] != known[:keep]:
            keep = list(map(_is, messages, known)).index(False)
        if self._revert_changes != _revert_flags.changes:
            flags = list(map(_reverted, messages[:keep]))
            if flags != self._flags[:keep]:
                keep = list(map(_eq, flags, self._flags)).index(False)
        return keep
