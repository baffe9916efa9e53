"""The todo list, plan mode and steering over LSP: agent/setMode, agent/prompt's mode, the todo,
mode and steer events, getMessages' todos and mode, the "plan a change here" code action."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def panel(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(module_root, module_api, Profile())
    editor.auto_approve = False
    yield editor
    await stop_editor(editor)


def last_results(api: MessagesAPIServer) -> list[dict[str, object]]:
    content = api.requests[-1].body["messages"][-1]["content"]
    return [b for b in content if b.get("type") == "tool_result"]


async def approve(editor: Editor, event: dict[str, object], decision: str, **more: str) -> None:
    params = {
        "sessionId": event["sessionId"],
        "requestId": event["requestId"],
        "decision": decision,
    }
    await editor.request("agent/approve", {**params, **more})


async def test_set_mode_refuses_changes_and_an_approved_plan_builds(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    session = await editor.new_session()
    assert await editor.request("agent/setMode", {"sessionId": session, "mode": "plan"}) == {
        "mode": "plan"
    }
    assert (await editor.wait_event(session, "mode"))["mode"] == "plan"
    listed = await editor.request("agent/listSessions", {})
    assert [s["mode"] for s in listed["sessions"] if s["sessionId"] == session] == ["plan"]
    module_api.enqueue(
        reply(tool_use("write", {"path": "p.txt", "content": "x"})),
        reply(tool_use("exit_plan", {"plan": "1. write p.txt"})),
        reply(text("planned")),
    )
    turn = asyncio.ensure_future(editor.prompt(session, "plan it"))
    question = await editor.wait_event(session, "permission-request")
    # The write was refused without a question; the plan is the first question.
    assert question["tool"] == "exit_plan" and question["input"] == {"plan": "1. write p.txt"}
    assert not (editor.root / "p.txt").exists()
    await approve(editor, question, "once")
    assert (await asyncio.wait_for(turn, 20))["finishReason"] == "end_turn"
    assert [e["mode"] for e in editor.session_events(session, "mode")] == ["plan", "build"]
    messages = await editor.request("agent/getMessages", {"sessionId": session})
    assert messages["mode"] == "build"


async def test_set_mode_bad_params_name_the_field(panel: Editor) -> None:
    session = await panel.new_session()
    with pytest.raises(JsonRpcException, match="mode"):
        await panel.request("agent/setMode", {"sessionId": session, "mode": "yolo"})
    with pytest.raises(JsonRpcException, match="sessionId"):
        await panel.request("agent/setMode", {"sessionId": "ses_nope", "mode": "plan"})
    with pytest.raises(JsonRpcException, match="mode"):
        await panel.request("agent/prompt", {"sessionId": session, "text": "x", "mode": "later"})


async def test_todo_events_and_get_messages_carry_the_list(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    todos = [{"content": "a", "status": "completed"}, {"content": "b", "status": "in_progress"}]
    module_api.enqueue(reply(tool_use("todowrite", {"todos": todos})), reply(text("ok")))
    session = await editor.new_session()
    await editor.prompt(session, "work")
    event = await editor.wait_event(session, "todo")
    assert event["todos"] == todos
    messages = await editor.request("agent/getMessages", {"sessionId": session})
    assert messages["todos"] == todos and messages["mode"] == "build"


async def test_a_steer_joins_the_running_turn(panel: Editor, module_api: MessagesAPIServer) -> None:
    editor = panel
    module_api.enqueue(reply(tool_use("bash", {"command": "echo hi"})), reply(text("steered")))
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    question = await editor.wait_event(session, "permission-request")
    steer = asyncio.ensure_future(editor.prompt(session, "use French", mode="steer"))
    await asyncio.sleep(0.1)
    await approve(editor, question, "once")
    first, second = await asyncio.wait_for(asyncio.gather(turn, steer), 20)
    assert first == second and first["text"] == "steered"
    assert (await editor.wait_event(session, "steer"))["prompt"] == "use French"
    content = module_api.requests[-1].body["messages"][-1]["content"]
    assert [b["type"] for b in content] == ["tool_result", "text"]


async def test_plan_a_change_here_starts_a_session_in_plan_mode(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    (editor.root / "plan.py").write_text("def f():\n    return 1\n")
    editor.open("plan.py")
    rng = types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=1, character=12)
    )
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("plan.py")),
            range=rng,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    [plan] = [a for a in actions if a.title == "Agent: plan a change here"]
    assert plan.command is not None and plan.command.arguments is not None
    module_api.enqueue(reply(text("a plan")))
    started = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.runOnSelection", arguments=plan.command.arguments)
    )
    session = started["sessionId"]
    await editor.wait_event(session, "turn-end")
    assert editor.session_events(session, "mode")[0]["mode"] == "plan"
    system = "".join(b["text"] for b in module_api.requests[-1].body["system"])
    assert "You are in plan mode" in system
