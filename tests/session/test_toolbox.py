"""The todo list, plan mode and steering, through the loop against the local Messages API (which
validates every request's history as the API does)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from agentls.store import Store
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory


def results_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def system_text(body: dict[str, Any]) -> str:
    return "".join(block["text"] for block in body["system"])


TODOS = [
    {"content": "read the module", "status": "completed"},
    {"content": "write the fix", "status": "in_progress", "priority": "high"},
    {"content": "run the tests", "status": "pending"},
]


# ---- the todo list ------------------------------------------------------------------------


async def test_todowrite_is_stored_sent_as_an_event_and_read_back(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("todowrite", {"todos": TODOS})), reply(text("on it")))
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "fix it")
    assert result.finish_reason == "end_turn"
    [event] = h.of_type("todo")
    assert [(t.content, t.status) for t in event.todos] == [
        (t["content"], t["status"]) for t in TODOS
    ]
    assert event.todos[1].priority == "high"
    # The model reads the list back in its tool result; no permission was asked.
    body = h.accepted_requests()[1]
    [res] = results_of(body)
    assert not res.get("is_error")
    assert "[x] read the module" in res["content"] and "[>] write the fix (high)" in res["content"]
    assert not h.of_type("permission-request")
    # The system prompt says when to keep one.
    assert "todowrite" in system_text(h.accepted_requests()[0])
    # Stored with the session: another store (a restart) reads it back.
    other = await Store.open(h.store.path)
    try:
        assert [t.content for t in await other.load_todos(session.id)] == [
            t["content"] for t in TODOS
        ]
    finally:
        await other.close()
    assert [t.status for t in await h.agent.todos(session.id)] == [t["status"] for t in TODOS]


async def test_a_bad_todo_list_is_an_error_the_model_reads_and_nothing_changes(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(
        reply(tool_use("todowrite", {"todos": [{"content": "x", "status": "doing"}]})),
        reply(text("ok")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "go")
    [res] = results_of(h.accepted_requests()[1])
    assert res["is_error"] and "todos.0.status" in res["content"]
    assert not h.of_type("todo")
    assert await h.agent.todos(session.id) == []


# ---- plan mode ----------------------------------------------------------------------------


async def test_plan_mode_refuses_changes_at_the_tool_level_even_when_rules_allow(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"permissions": {"*": "allow"}})
    (h.root / "a.txt").write_text("hello\n")
    api.enqueue(
        reply(
            tool_use("write", {"path": "new.txt", "content": "x"}),
            tool_use("bash", {"command": "touch made.txt"}),
            tool_use("bash", {"command": "cat a.txt | wc -l"}),
            tool_use("bash", {"command": "$TOOL a.txt"}),  # cannot be judged: refused
        ),
        reply(text("here is what I found")),
    )
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    assert [e.mode for e in h.of_type("mode")] == ["plan"]
    await h.agent.prompt(session.id, "plan the change")
    assert not (h.root / "new.txt").exists() and not (h.root / "made.txt").exists()
    assert not h.of_type("permission-request")
    first = h.accepted_requests()[0]
    assert "You are in plan mode" in system_text(first)
    write, touch, cat, computed = results_of(h.accepted_requests()[1])
    for refused in (write, touch, computed):
        assert refused["is_error"] and "plan mode" in refused["content"]
    assert not cat.get("is_error") and cat["content"].strip().startswith("1")
    # Stored: the session reloaded elsewhere is still planning.
    record = await h.store.get_session(session.id)
    assert record is not None and record.mode == "plan"


async def answer_plan(
    h: Harness, api: MessagesAPIServer, decision: str, feedback: str | None = None
) -> str:
    (h.root / "f.txt").write_text("old\n")
    api.enqueue(
        reply(tool_use("exit_plan", {"plan": "1. change f.txt to say new"})),
        reply(tool_use("write", {"path": "g.txt", "content": "new\n"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    turn = asyncio.create_task(h.agent.prompt(session.id, "plan then do it"))
    question = await h.wait_for("permission-request")
    assert question.tool == "exit_plan" and question.input == {"plan": "1. change f.txt to say new"}
    assert question.always is None  # a plan is approved once
    h.agent.approve(session.id, question.request_id, decision, feedback)
    await asyncio.wait_for(turn, 10)
    return session.id


async def test_an_approved_plan_switches_to_build_and_the_turn_goes_on(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"permissions": {"write": "allow"}})
    session_id = await answer_plan(h, api, "once")
    assert (h.root / "g.txt").read_text() == "new\n"
    assert [e.mode for e in h.of_type("mode")] == ["plan", "build"]
    requests = h.accepted_requests()
    [approved] = results_of(requests[1])
    assert "approved" in approved["content"] and not approved.get("is_error")
    assert "You are in plan mode" in system_text(requests[0])
    assert "You are in plan mode" not in system_text(requests[1])
    record = await h.store.get_session(session_id)
    assert record is not None and record.mode == "build"


async def test_a_rejected_plan_keeps_planning_with_the_feedback(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"permissions": {"write": "allow"}})
    session_id = await answer_plan(h, api, "reject", "also update the docs")
    assert not (h.root / "g.txt").exists()  # still planning: the write was refused
    requests = h.accepted_requests()
    [rejected] = results_of(requests[1])
    assert rejected["is_error"] and "also update the docs" in rejected["content"]
    [write] = results_of(requests[2])
    assert write["is_error"] and "plan mode" in write["content"]
    record = await h.store.get_session(session_id)
    assert record is not None and record.mode == "plan"


async def test_exit_plan_in_build_mode_asks_nothing(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("exit_plan", {"plan": "p"})), reply(text("ok")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "go")
    [res] = results_of(h.accepted_requests()[1])
    assert res["is_error"] and "not in plan mode" in res["content"]
    assert not h.of_type("permission-request")


# ---- steering -----------------------------------------------------------------------------


async def test_a_steer_joins_the_running_turn_after_the_tool_results(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(
        reply(tool_use("bash", {"command": "echo one"}), tool_use("bash", {"command": "echo two"})),
        reply(text("done, in French")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "run them"))
    first = await h.wait_for("permission-request")
    steer = asyncio.create_task(h.agent.prompt(session.id, "answer in French", mode="steer"))
    await asyncio.sleep(0.05)  # the steer is waiting for the turn, not queued for a new one
    assert not steer.done()
    h.agent.approve(session.id, first.request_id, "once")
    second = await h.wait_for("permission-request", 2)
    h.agent.approve(session.id, second.request_id, "once")
    result = await asyncio.wait_for(turn, 10)
    assert await asyncio.wait_for(steer, 10) == result  # the steer's answer is the turn's
    assert len(h.of_type("turn-start")) == 1
    [event] = h.of_type("steer")
    assert event.prompt == "answer in French"
    # One user message: both tool results first, then the steer (the server validated it).
    last = h.accepted_requests()[1]["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "tool_result", "text"]
    assert last["content"][2]["text"] == "answer in French"
    # Stored in that order: a reloaded session sends the same history.
    messages = await h.store.load_messages(session.id)
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2].id == event.message_id


async def test_a_steer_during_the_last_step_gets_one_more_step(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    hold = threading.Event()
    api.enqueue(
        reply(text("the answer is 4"), chunk_size=4, hold=hold, hold_after=6),
        reply(text("shorter: 4")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "2+2?"))
    await h.wait_for("text-delta")
    steer = asyncio.create_task(h.agent.prompt(session.id, "be brief", mode="steer"))
    await asyncio.sleep(0.05)
    hold.set()
    result = await asyncio.wait_for(turn, 10)
    assert await asyncio.wait_for(steer, 10) == result
    assert result.text == "shorter: 4"
    messages = h.accepted_requests()[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[-1]["content"][-1]["text"] == "be brief"


async def test_a_steer_to_an_idle_session_is_a_prompt(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(text("hi")))
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "hello", mode="steer")
    assert result.text == "hi" and len(h.of_type("turn-start")) == 1
    assert not h.of_type("steer")


async def test_cancel_ends_a_waiting_steer_with_the_turn(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("bash", {"command": "echo one"})), reply(text("never")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    await h.wait_for("permission-request")
    steer = asyncio.create_task(h.agent.prompt(session.id, "and then", mode="steer"))
    await asyncio.sleep(0.05)
    await h.agent.cancel(session.id)
    assert (await asyncio.wait_for(turn, 10)).finish_reason == "cancelled"
    assert (await asyncio.wait_for(steer, 10)).finish_reason == "cancelled"
    assert not h.of_type("steer") and len(h.accepted_requests()) == 1
