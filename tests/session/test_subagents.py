"""Sub-agents (the task tool) through the loop against the local Messages API: a child session
stored under its parent, read-only tools, several at once under maxParallelTasks, the parent's
cancel, questions and usage shared, agent types from the settings."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from agentls.trust import restrict
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


def results_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools", [])}


def usage(n: int) -> dict[str, int]:
    return {"input_tokens": n, "output_tokens": n}


def task(description: str, prompt: str, **more: Any) -> Any:
    return tool_use("task", {"description": description, "prompt": prompt, **more})


async def test_a_task_runs_in_a_child_session_with_read_only_tools_and_reports(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"permissions": {"read": "allow"}})
    (h.root / "a.txt").write_text("hello from a\n")
    api.enqueue(
        reply(task("look at a", "Read a.txt and say what it says."), usage=usage(10)),
        reply(tool_use("read", {"path": "a.txt"}), usage=usage(100)),
        reply(text("a.txt says hello"), usage=usage(1000)),
        reply(text("done"), usage=usage(10_000)),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "what does a say?")
    assert result.finish_reason == "end_turn"
    parent_first, child_first, child_second, parent_last = h.accepted_requests()
    # The child's requests: its own history (the task's prompt), the read-only tools only (no
    # language tools: no language server covers this workspace), and its own system prompt.
    assert child_first["messages"][0]["content"][-1]["text"] == "Read a.txt and say what it says."
    assert tool_names(child_first) == {"read", "glob", "grep", "list", "webfetch"}
    child_system = child_first["system"][0]["text"]
    assert child_system.startswith("You are a sub-agent of agentls, of the agent type general")
    assert "Your final message is the report the caller relays" in child_system
    assert "todowrite" not in child_system and "`edit`" not in child_system
    assert parent_first["system"][0]["text"].startswith("You are agentls")
    assert "task" in tool_names(parent_first)
    assert "hello from a" in results_of(child_second)[0]["content"]
    # The parent reads the final text and a line on what the sub-agent did.
    [res] = results_of(parent_last)
    assert not res.get("is_error")
    assert res["content"].startswith("a.txt says hello")
    assert "[sub-agent general, session " in res["content"]
    assert "1 tool call (read); read a.txt]" in res["content"]
    # Stored as a child of the parent session, with its own history.
    sessions = {s.id: s for s in await h.store.list_sessions()}
    [child] = [s for s in sessions.values() if s.id != session.id]
    assert child.parent_id == session.id and child.agent == "general"
    assert sessions[session.id].parent_id is None
    assert child.id in res["content"]
    assert [m.role for m in await h.agent.messages(child.id)] == ["user", "assistant", "assistant"]
    # Its events carry the child session and the task call they belong to.
    [call] = [e for e in h.of_type("tool-call") if e.tool == "task"]
    child_events = [e for e in h.events if e.session_id == child.id]
    assert {e.type for e in child_events} >= {"turn-start", "tool-call", "tool-result", "turn-end"}
    assert all(
        e.parent_session_id == session.id and e.parent_call_id == call.call_id and e.agent
        for e in child_events
    )
    assert "parentCallId" in child_events[0].wire()
    assert all(e.parent_session_id is None for e in h.events if e.session_id == session.id)
    # Its usage counts into the parent turn's.
    assert result.usage.input_tokens == 11_110 and result.usage.output_tokens == 11_110


async def test_tasks_of_one_message_run_together_capped_by_max_parallel_tasks(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"maxParallelTasks": 2})
    held = threading.Event()
    api.enqueue(
        reply(task("one", "look one"), task("two", "look two"), task("three", "look three")),
        reply(text("found it"), hold=held),
        reply(text("found it"), hold=held),
        reply(text("found it")),
        reply(text("all done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "look at three things"))
    try:
        # Two sub-agents stream at once; the third waits for a place.
        await asyncio.to_thread(api.wait_for_requests, 3, 10.0)
        await asyncio.sleep(0.3)
        assert len(api.requests) == 3
        children = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
        assert len(children) == 2
    finally:
        held.set()
    result = await asyncio.wait_for(turn, 10)
    assert result.finish_reason == "end_turn"
    results = results_of(h.accepted_requests()[-1])
    assert len(results) == 3 and all(r["content"].startswith("found it") for r in results)
    children = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
    assert sorted(c.title for c in children) == ["one", "three", "two"]


async def test_cancelling_the_parent_cancels_the_sub_agent(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    held = threading.Event()
    api.enqueue(
        reply(task("slow", "take your time")),
        reply(text("partial answer, never finished"), hold=held),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    try:
        start = await h.wait_for("turn-start", 2)
        child_id = start.session_id
        assert start.parent_session_id == session.id
        await asyncio.to_thread(api.wait_for_requests, 2, 10.0)
        assert await h.agent.cancel(session.id)
        result = await asyncio.wait_for(turn, 10)
    finally:
        held.set()
    assert result.finish_reason == "cancelled"
    ends = {e.session_id: e.finish_reason for e in h.of_type("turn-end")}
    assert ends == {child_id: "cancelled", session.id: "cancelled"}
    # Both stored as cancelled: the task call, and the child's own turn.
    [*_, parent_reply] = await h.agent.messages(session.id)
    assert parent_reply.finish_reason == "cancelled"
    [call] = [p for p in parent_reply.parts if getattr(p, "tool", None) == "task"]
    assert call.status == "cancelled"
    [*_, child_reply] = await h.store.load_messages(child_id)
    assert child_reply.finish_reason == "cancelled"


async def test_a_sub_agents_question_reaches_the_user_labelled_and_agent_types_apply(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(
        {
            "agents": {
                "writer": {
                    "description": "writes notes",
                    "prompt": "You write notes.",
                    "tools": ["read", "write", "task", "nosuchtool"],
                }
            }
        }
    )
    api.enqueue(
        reply(task("note", "Write notes.txt", agent="writer")),
        reply(tool_use("write", {"path": "notes.txt", "content": "noted\n"})),
        reply(text("wrote it")),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "take a note"))
    question = await h.wait_for("permission-request")
    assert question.tool == "write"
    assert question.agent == "writer" and question.parent_session_id == session.id
    assert question.session_id != session.id  # the child's: approve answers it there
    h.agent.approve(question.session_id, question.request_id, "once")
    result = await asyncio.wait_for(turn, 10)
    assert result.finish_reason == "end_turn"
    assert (h.root / "notes.txt").read_text() == "noted\n"
    [resolved] = h.of_type("permission-resolved")
    assert resolved.agent == "writer" and resolved.decision == "once"
    # The task tool tells the model the agent types.
    [task_tool] = [t for t in h.accepted_requests()[0]["tools"] if t["name"] == "task"]
    assert "The agent types: general: " in task_tool["description"]
    assert "writer: writes notes." in task_tool["description"]
    child_first = h.accepted_requests()[1]
    # Its type's tools (no task: depth 1; a name that is no tool is left out) and prompt.
    assert tool_names(child_first) == {"read", "write"}
    assert (
        child_first["messages"][0]["content"][-1]["text"] == "You write notes.\n\nWrite notes.txt"
    )
    [child] = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
    assert child.agent == "writer"


async def test_an_unknown_agent_type_is_an_error_the_model_reads(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(task("x", "y", agent="ghost")), reply(text("ok")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "go")
    [res] = results_of(h.accepted_requests()[-1])
    assert res["is_error"] and "Unknown agent 'ghost'" in res["content"]
    assert "general" in res["content"]
    assert [s.id for s in await h.store.list_sessions()] == [session.id]


def test_an_untrusted_workspace_cannot_define_agents(tmp_path: Path) -> None:
    layer = {"agents": {"evil": {"tools": ["bash", "write"]}}, "maxParallelTasks": 32}
    out = restrict(tmp_path / ".agentls" / "config.json", layer, "untrusted")
    assert "agents" in out.ignored and "maxParallelTasks" in out.ignored
    assert "agents" not in out.kept


def test_the_scripted_model_plays_a_sub_agents_steps_by_its_prompt() -> None:
    """The e2e scenario's sub-agent prompt: a todo list and a task, whose session plays `tasks`."""
    from agentls.model.scripted import ScriptedProvider

    model = ScriptedProvider("e2e")
    parent: list[dict[str, Any]] = []
    for n in range(5):  # a named prompt plays its steps whatever its turn
        parent += [{"role": "user", "content": f"prompt {n}"}]
        parent += [{"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    parent += [{"role": "user", "content": "Look at the tests with a sub-agent."}]
    first = model.pick_step(parent)
    [task] = [b for b in first["blocks"] if b.get("tool") == "task"]
    prompt = task["input"]["prompt"]
    child: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    assert [b.get("tool") for b in model.pick_step(child)["blocks"]] == [None, "glob"]
    child += [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "glob", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
    ]
    assert model.pick_step(child)["blocks"] == [
        {"text": "test_calc.py tests median and mean of calc.py."}
    ]
