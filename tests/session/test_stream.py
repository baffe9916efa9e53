"""Stream folding alone (session/stream.py): provider events in, the parts of a message out."""

from __future__ import annotations

from typing import Any

from agentls.history import Message, TextPart, ThinkingPart, ToolPart
from agentls.model.base import (
    BlockStart,
    BlockStop,
    MessageEnd,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)
from agentls.session.stream import FinishedBlock, StreamedText, StreamFolder


def folder() -> StreamFolder:
    message = Message(id="msg_1", session_id="ses_1", role="assistant", created_at=0)
    return StreamFolder(message, lambda tool, data: f"{tool} {data.get('path', '')}".strip())


def feed(f: StreamFolder, *events: Any) -> list[Any]:
    return [out for out in (f.fold(e) for e in events) if out is not None]


def test_text_thinking_and_a_tool_call_become_parts_in_order() -> None:
    f = folder()
    out = feed(
        f,
        BlockStart(index=0, kind="thinking"),
        ThinkingDelta(index=0, text="Let me "),
        ThinkingDelta(index=0, text="look."),
        SignatureDelta(index=0, signature="sig"),
        BlockStop(index=0),
        BlockStart(index=1, kind="text"),
        TextDelta(index=1, text="Reading "),
        TextDelta(index=1, text="it."),
        BlockStop(index=1),
        BlockStart(index=2, kind="tool_use", tool_id="toolu_1", tool_name="read"),
        ToolInputDelta(index=2, partial_json='{"path": '),
        ToolInputDelta(index=2, partial_json='"a.txt"}'),
        BlockStop(index=2),
        MessageEnd(stop_reason="tool_use"),
    )
    thinking, text, call = f.message.parts
    assert isinstance(thinking, ThinkingPart) and thinking.text == "Let me look."
    assert thinking.signature == "sig"
    assert isinstance(text, TextPart) and text.text == "Reading it."
    assert isinstance(call, ToolPart) and call.input == {"path": "a.txt"}
    assert call.call_id == "toolu_1" and call.title == "read a.txt"
    assert f.stop_reason == "tool_use" and f.unfinished() == []
    # What the turn acts on: each delta as it comes, each block once it closes.
    assert [o.kind for o in out if isinstance(o, StreamedText)] == ["thinking"] * 2 + ["text"] * 2
    assert [o.part for o in out if isinstance(o, FinishedBlock)] == [thinking, text, call]


def test_invalid_tool_input_is_an_error_that_nothing_runs() -> None:
    f = folder()
    feed(
        f,
        BlockStart(index=0, kind="tool_use", tool_id="toolu_1", tool_name="read"),
        ToolInputDelta(index=0, partial_json='["not", "an object"]'),
        BlockStop(index=0),
    )
    [call] = f.message.parts
    assert isinstance(call, ToolPart) and call.status == "error" and call.finished
    assert "not valid JSON" in (call.output or "")


def test_an_unclosed_tool_call_is_dropped_and_unclosed_text_kept() -> None:
    f = folder()
    feed(
        f,
        BlockStart(index=0, kind="text"),
        TextDelta(index=0, text="Half an ans"),
        BlockStart(index=1, kind="tool_use", tool_id="toolu_1", tool_name="write"),
        ToolInputDelta(index=1, partial_json='{"path": "a'),
    )
    f.flush_text()
    f.drop_unfinished_tools()
    [text] = f.message.parts
    assert isinstance(text, TextPart) and text.text == "Half an ans"
    assert any(p is text for p in f.unfinished())  # the turn stores it as it is


def test_a_retry_voids_what_the_step_streamed() -> None:
    f = folder()
    feed(f, BlockStart(index=0, kind="text"), TextDelta(index=0, text="first try"))
    f.reset()
    feed(f, BlockStart(index=0, kind="text"), TextDelta(index=0, text="second"), BlockStop(index=0))
    [text] = f.message.parts
    assert isinstance(text, TextPart) and text.text == "second"


def test_a_delta_for_no_open_block_is_ignored() -> None:
    f = folder()
    assert feed(f, TextDelta(index=3, text="stray")) == []
    assert f.message.parts == []
