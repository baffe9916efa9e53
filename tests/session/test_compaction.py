"""Compaction: past the threshold the older history is summarized once, the session goes on from
summary + recent messages, and a reloaded session sends the summary, not the old messages."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from agentls.history import Message, SummaryPart, TextPart, ToolPart
from agentls.session.compaction import (
    COMPACTION_SYSTEM_PROMPT,
    choose_cut,
    context_tokens,
    transcript,
)
from messages_api import MessagesAPIServer, error, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory

SETTINGS = {"contextWindow": 100_000, "compactKeepRecentTokens": 600, "permissions": {"*": "allow"}}
SUMMARY = "The user set the codeword BANANA. a.txt was read: it holds the letter a, repeated."


def is_summary_request(body: dict[str, Any]) -> bool:
    return bool(body.get("system")) and body["system"][0]["text"] == COMPACTION_SYSTEM_PROMPT


def sent_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


async def drive_past_threshold(
    h: Harness, api: MessagesAPIServer, summary_reply: Any, *after_summary: Any
) -> str:
    (h.root / "a.txt").write_text("a" * 2000 + "\n")
    (h.root / "b.txt").write_text("b" * 2000 + "\n")
    api.enqueue(
        reply(text("Noted.")),
        reply(tool_use("read", {"path": "a.txt"}), usage={"input_tokens": 50_000}),
        # 85_000 + output > 80% of 100_000: compaction before the next step.
        reply(tool_use("read", {"path": "b.txt"}), usage={"input_tokens": 85_000}),
        summary_reply,
        *(after_summary or [reply(text("Done reading."))]),
    )
    session = await h.agent.new_session()
    first = await h.agent.prompt(session.id, "Remember the codeword BANANA")
    assert first.finish_reason == "end_turn"
    second = await h.agent.prompt(session.id, "Read a.txt then b.txt")
    assert second.finish_reason == "end_turn" and second.text == "Done reading."
    return session.id


async def test_compacts_once_keeps_going_and_a_reload_sends_the_summary(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(SETTINGS)
    session_id = await drive_past_threshold(
        h, api, reply(text(SUMMARY), usage={"input_tokens": 900})
    )
    bodies = h.accepted_requests()
    assert len(bodies) == 5
    assert [is_summary_request(b) for b in bodies] == [False, False, False, True, False]

    # The dedicated request: its own prompt, no tools, no cache breakpoints, a transcript.
    summary_request = bodies[3]
    assert "tools" not in summary_request and "cache_control" not in json.dumps(summary_request)
    (only,) = summary_request["messages"]
    prompt = only["content"][0]["text"]
    assert "Remember the codeword BANANA" in prompt and "[assistant called read]" in prompt
    assert 'b.txt"}' not in prompt  # the newest message is kept as it is, not summarized

    # The next step starts from the summary, then the kept message (the call that read b.txt).
    after = bodies[4]
    assert SUMMARY in after["messages"][0]["content"][0]["text"]
    assert "BANANA" not in sent_text(after).replace(SUMMARY, "")
    assert [m["role"] for m in after["messages"]] == ["user", "assistant", "user"]
    assert after["messages"][1]["content"][0]["name"] == "read"
    assert after["messages"][2]["content"][0]["type"] == "tool_result"

    events = h.of_type("compaction")
    assert [e.status for e in events] == ["started", "done"]
    assert events[0].context_window == 100_000 and events[0].context_tokens > 85_000
    assert events[1].summarized_messages == 4

    # Persisted: the session points at the summary, stored just before the first kept message.
    record = await h.store.get_session(session_id)
    assert record is not None and record.summary_message_id == events[1].summary_message_id
    everything = await h.store.load_messages(session_id)
    assert len(everything) == 7  # nothing is deleted
    index = [m.id for m in everything].index(record.summary_message_id)
    assert index == 4 and everything[index].role == "user"
    part = everything[index].parts[0]
    assert isinstance(part, SummaryPart) and part.text == SUMMARY
    since = await h.store.load_messages(session_id, since_message_id=record.summary_message_id)
    assert [m.id for m in since] == [m.id for m in everything[4:]]
    state = await h.agent.session(session_id)
    assert [m.id for m in state.messages] == [m.id for m in since]

    # The summary request's cost counts for the turn and the session.
    usage_steps = [e.step for e in h.of_type("usage")]
    assert any(u.input_tokens == 900 for u in usage_steps)
    assert record.usage.input_tokens >= 50_000 + 85_000 + 900

    # Keeps going in this process without compacting again...
    api.enqueue(reply(text("BANANA")))
    third = await h.agent.prompt(session_id, "What is the codeword?")
    assert third.text == "BANANA"
    assert SUMMARY in h.accepted_requests()[-1]["messages"][0]["content"][0]["text"]
    assert len(h.of_type("compaction")) == 2

    # ...and a fresh process loads the summary, not the old messages.
    reloaded = await make_harness(SETTINGS)
    api.enqueue(reply(text("Still BANANA")))
    fourth = await reloaded.agent.prompt(session_id, "And now?")
    assert fourth.text == "Still BANANA"
    body = reloaded.accepted_requests()[-1]
    assert SUMMARY in body["messages"][0]["content"][0]["text"]
    assert "Remember the codeword" not in sent_text(body)
    assert "a" * 100 not in sent_text(body)  # the output of the summarized read
    assert "b" * 100 in sent_text(body)  # the kept one
    assert reloaded.of_type("compaction") == []


async def test_a_failed_compaction_leaves_the_session_as_it_was(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(SETTINGS)
    failing = error(400, "invalid_request_error", "prompt is too long")
    session_id = await drive_past_threshold(
        h,
        api,
        failing,
        # Still past the threshold, but a failed compaction is not tried again in this turn.
        reply(tool_use("list", {}), usage={"input_tokens": 88_000}),
        reply(text("Done reading."), usage={"input_tokens": 89_000}),
    )
    bodies = h.accepted_requests()
    assert len(api.requests) == 6 and api.requests[3].status == 400
    events = h.of_type("compaction")
    assert [e.status for e in events] == ["started", "failed"]
    assert "prompt is too long" in (events[1].error or "")
    # The steps after it went on with the whole history.
    assert "Remember the codeword BANANA" in sent_text(bodies[3])
    assert "Remember the codeword BANANA" in sent_text(bodies[4])
    record = await h.store.get_session(session_id)
    assert record is not None and record.summary_message_id is None
    assert not any(m.summary() for m in await h.store.load_messages(session_id))
    state = await h.agent.session(session_id)
    assert state.messages[0].parts == [TextPart(text="Remember the codeword BANANA")]
    # The next turn tries again (the last step is still past the threshold) and succeeds.
    api.enqueue(reply(text(SUMMARY)), reply(text("ok")))
    await h.agent.prompt(session_id, "go on")
    assert [e.status for e in h.of_type("compaction")][2:] == ["started", "done"]


async def test_cancel_during_compaction_leaves_the_session_usable(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(SETTINGS)
    hold = threading.Event()
    (h.root / "a.txt").write_text("a\n")
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "warm up")  # answered by the default reply
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"}), usage={"input_tokens": 90_000}),
        reply(text("never"), hold=hold),
    )
    turn = asyncio.create_task(h.agent.prompt(session.id, "read a.txt"))
    await h.wait_for("compaction")
    await asyncio.sleep(0.05)
    await h.agent.cancel(session.id)
    result = await asyncio.wait_for(turn, 30)
    hold.set()
    assert result.finish_reason == "cancelled"
    assert is_summary_request(api.requests[2].body)
    record = await h.store.get_session(session.id)
    assert record is not None and record.summary_message_id is None
    assert not any(m.summary() for m in (await h.agent.session(session.id)).messages)
    api.enqueue(reply(text(SUMMARY)), reply(text("fine")))
    again = await h.agent.prompt(session.id, "again")
    assert again.text == "fine"
    h.accepted_requests()


def _message(role: str, *parts: Any, usage: Any = None) -> Message:
    from agentls.history import new_id, now_ms

    return Message(
        id=new_id("msg"),
        session_id="s",
        role=role,  # type: ignore[arg-type]
        created_at=now_ms(),
        parts=list(parts),
        usage=usage,
    )


def test_cut_keeps_the_newest_and_never_leaves_nothing_to_summarize() -> None:
    from agentls.history import Usage

    call = ToolPart(call_id="toolu_1", tool="read", input={"path": "x"}, status="completed")
    call.output = "x" * 4000
    messages = [
        _message("user", TextPart(text="task")),
        _message("assistant", TextPart(text="on it"), call),
        _message("assistant", TextPart(text="more " * 100)),
        _message("user", TextPart(text="next")),
    ]
    assert choose_cut(messages, keep_tokens=0) == 3
    assert choose_cut(messages, keep_tokens=200) == 2
    assert choose_cut(messages, keep_tokens=10**6) == 1
    assert choose_cut(messages[:1], keep_tokens=0) is None
    summary = _message("user", SummaryPart(text="s", last_message_id=messages[-1].id))
    assert choose_cut([summary, messages[-1]], keep_tokens=0) is None
    assert "[read result]" in transcript(messages) and "characters left out" in transcript(messages)
    # Usage measured before a compaction does not count after it.
    messages[2].usage = Usage(input_tokens=90_000)
    assert context_tokens(messages) == 90_000
    assert context_tokens([summary, messages[2], messages[3]]) is None


def test_a_reverted_step_does_not_measure_the_context() -> None:
    from agentls.history import Usage

    messages = [
        _message("user", TextPart(text="task")),
        _message("assistant", TextPart(text="short"), usage=Usage(input_tokens=1_000)),
        _message("user", TextPart(text="paste a huge log")),
        _message("assistant", TextPart(text="read it"), usage=Usage(input_tokens=150_000)),
    ]
    assert context_tokens(messages) == 150_000
    # agent/revert dropped the huge turn: the context is the step before it, not a compaction's worth.
    messages[2].reverted = messages[3].reverted = True
    assert context_tokens(messages) == 1_000
