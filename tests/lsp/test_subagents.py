"""Sub-agents over LSP: the child's events as agent/event notifications with their parent link,
its question answered through agent/approve with its own sessionId, listSessions naming the
parent, getMessages reading the child's history."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
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


async def test_a_sub_agents_events_question_and_session_over_lsp(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    module_api.enqueue(
        reply(tool_use("task", {"description": "read s", "prompt": "What is in s.txt?"})),
        reply(tool_use("webfetch", {"url": "https://example.com/sauce"})),
        reply(text("no sauce fetched")),
        reply(text("the sauce")),
    )
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "ask a sub-agent"))
    [call] = [e for e in [await editor.wait_event(session, "tool-call")] if e["tool"] == "task"]

    async def child_question() -> dict[str, object]:
        while True:
            for event in editor.events:
                if event["type"] == "permission-request" and event.get("parentSessionId"):
                    return event
            await asyncio.sleep(0.02)

    question = await asyncio.wait_for(child_question(), 15)
    child = str(question["sessionId"])
    assert child != session and question["parentCallId"] == call["callId"]
    assert question["agent"] == "general" and question["tool"] == "webfetch"
    await editor.request(
        "agent/approve",
        {"sessionId": child, "requestId": question["requestId"], "decision": "reject"},
    )
    assert (await asyncio.wait_for(turn, 30))["text"] == "the sauce"
    child_events = editor.session_events(child)
    assert {"turn-start", "tool-call", "tool-result", "turn-end"} <= {
        e["type"] for e in child_events
    }
    assert all(e["parentSessionId"] == session for e in child_events)
    listed = {
        s["sessionId"]: s for s in (await editor.request("agent/listSessions", {}))["sessions"]
    }
    assert listed[child]["parentId"] == session and listed[child]["agent"] == "general"
    assert "parentId" not in listed[session]
    with pytest.raises(JsonRpcException, match="sessionId: .* sub-agent's session"):
        await editor.prompt(child, "keep going")
    messages = await editor.request("agent/getMessages", {"sessionId": child})
    assert [m["role"] for m in messages["messages"]] == ["user", "assistant", "assistant"], messages
