"""Proposals follow the user's typing (lsp/rebase.py): a proposal waiting for approval is merged
anew into the document each time the user changes it (the proposal-rebased event redraws it),
accepting it keeps the user's typing, lines both changed are a conflict that is never written
over; review "after" undo merges the same way. A real LSP client over stdio, the real SDK
against the local Messages API."""

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
from tests.lsp.test_partial_accept import answer, code_actions, hunks_of, propose, tool_result

pytestmark = pytest.mark.asyncio(loop_scope="module")

OLD = "def top():\n    return 1\n\n\ndef middle():\n    return 2\n\n\ndef bottom():\n    return 3\n"
# The agent changes the last function.
NEW = OLD.replace("return 3", "return 30")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def panel(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A client with an approvals panel; each question is answered by the test."""
    editor = await start_editor(module_root / "panel", module_api, Profile())
    editor.auto_approve = False
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A client without an approvals panel: a waiting edit is offered as code actions."""
    profile = Profile(approvals=False, diagnostics_push=False, saves_edits=False)
    editor = await start_editor(module_root / "plain", module_api, profile)
    editor.answer_message_with = None  # the message request stays unanswered
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def after(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """Review "after": edits applied at once, kept or undone later."""
    editor = await start_editor(module_root / "after", module_api, Profile(), {"review": "after"})
    yield editor
    await stop_editor(editor)


async def test_a_proposal_follows_typing_elsewhere_and_accepting_keeps_both(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    (editor.root / "app.py").write_text(OLD)
    editor.open("app.py")
    session, request, turn = await propose(editor, module_api, "app.py", None, NEW)
    document, [hunk] = hunks_of(request)
    assert (document["version"], hunk["range"]["start"]["line"]) == (1, 9)

    # The user adds a line at the top while the proposal waits: it is redrawn below it.
    typed = "import os\n" + OLD.replace("return 1", "return 10")
    editor.type_text("app.py", typed)
    rebased = await editor.wait_event(session, "proposal-rebased")
    assert rebased["requestId"] == request["requestId"] and rebased["path"] == "app.py"
    assert "conflict" not in rebased or rebased["conflict"] is False
    redrawn, [moved] = hunks_of(rebased)
    assert redrawn["version"] == 2
    assert moved["range"]["start"]["line"] == 10 and moved["newText"] == "    return 30\n"
    assert "-    return 3\n+    return 30\n" in rebased["diff"]

    await editor.request("agent/approve", answer(session, request))
    await asyncio.wait_for(turn, 20)
    both = typed.replace("return 3", "return 30")
    assert editor.buffers[editor.uri("app.py")].text == both
    output = tool_result(module_api)
    assert "The user edited other lines of app.py while your change waited" in output
    assert "+import os" in output and "+    return 10" in output


async def test_a_hunk_of_the_rebased_proposal_is_accepted_on_the_text_now(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    (editor.root / "part.py").write_text(OLD)
    editor.open("part.py")
    two = NEW.replace("return 1", "return 100")  # two hunks: top and bottom
    session, request, turn = await propose(editor, module_api, "part.py", None, two)
    typed = OLD.replace("return 2", "return 20  # mine")
    editor.type_text("part.py", typed)
    rebased = await editor.wait_event(session, "proposal-rebased")
    document, edits = hunks_of(rebased)
    assert [e["newText"] for e in edits] == ["    return 100\n", "    return 30\n"]

    only_last = {"documentChanges": [{"textDocument": document, "edits": edits[1:]}]}
    await editor.request("agent/approve", answer(session, request, only_last))
    await asyncio.wait_for(turn, 20)
    assert editor.buffers[editor.uri("part.py")].text == typed.replace("return 3", "return 30")


async def test_typing_on_the_same_line_is_a_conflict_never_written_over(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    (editor.root / "same.py").write_text(OLD)
    editor.open("same.py")
    session, request, turn = await propose(editor, module_api, "same.py", None, NEW)
    mine = OLD.replace("return 3", "return 'mine'")
    editor.type_text("same.py", mine)
    rebased = await editor.wait_event(session, "proposal-rebased")
    assert rebased["conflict"] is True and rebased["lines"] == "line 10"
    assert "edit" not in rebased

    # Accepting is refused with the lines named; the question stays open.
    with pytest.raises(JsonRpcException) as refused:
        await editor.request("agent/approve", answer(session, request))
    message = refused.value.message
    assert "cannot be accepted" in message and "line 10 of same.py" in message
    assert not editor.session_events(session, "permission-resolved")
    assert editor.buffers[editor.uri("same.py")].text == mine

    # Rejected, the model is told why.
    await editor.request(
        "agent/approve", answer(session, request, decision="reject", feedback="not now")
    )
    await asyncio.wait_for(turn, 20)
    assert editor.buffers[editor.uri("same.py")].text == mine
    output = tool_result(module_api)
    assert "Their feedback: not now" in output
    assert "the user changed line 10 of same.py while your proposal waited" in output


async def test_undoing_the_overlapping_typing_clears_the_conflict(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    (editor.root / "back.py").write_text(OLD)
    editor.open("back.py")
    session, request, turn = await propose(editor, module_api, "back.py", None, NEW)
    editor.type_text("back.py", OLD.replace("return 3", "return 4"))
    first = await editor.wait_event(session, "proposal-rebased")
    assert first["conflict"] is True
    editor.type_text("back.py", OLD.replace("return 1", "return 4"))
    second = await editor.wait_event(session, "proposal-rebased", count=2)
    assert second.get("conflict", False) is False and second["edit"]

    await editor.request("agent/approve", answer(session, request))
    await asyncio.wait_for(turn, 20)
    assert editor.buffers[editor.uri("back.py")].text == NEW.replace("return 1", "return 4")


async def test_the_code_actions_of_a_waiting_edit_follow_the_typing(
    plain: Editor, module_api: MessagesAPIServer
) -> None:
    editor = plain
    (editor.root / "ca.py").write_text(OLD)
    editor.open("ca.py")
    session, request, turn = await propose(editor, module_api, "ca.py", None, NEW)
    assert [a.title for a in await code_actions(editor, "ca.py", 9)][2:3] == [
        "Accept this hunk: Overwrite ca.py, line 10"
    ]
    typed = "import os\n" + OLD
    editor.type_text("ca.py", typed)
    # The hunk moved down with the user's line: offered on line 11 now, accepted on their text.
    assert await code_actions(editor, "ca.py", 9) == []
    [accept] = [
        a
        for a in await code_actions(editor, "ca.py", 10)
        if a.title == "Accept this hunk: Overwrite ca.py, line 11"
    ]
    assert accept.command is not None
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.approve", arguments=accept.command.arguments)
    )
    await asyncio.wait_for(turn, 20)
    assert editor.buffers[editor.uri("ca.py")].text == typed.replace("return 3", "return 30")


async def test_an_undo_after_the_user_typed_elsewhere_keeps_their_typing(
    after: Editor, module_api: MessagesAPIServer
) -> None:
    editor = after
    path = editor.root / "calc.py"
    path.write_text(OLD)
    module_api.enqueue(
        reply(tool_use("read", {"path": "calc.py"})),
        reply(tool_use("write", {"path": "calc.py", "content": NEW})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "change bottom")
    await editor.wait_event(session, "review")
    editor.open("calc.py")
    typed = NEW.replace("return 1", "return 'mine'")
    editor.type_text("calc.py", typed)

    undone = await editor.request(
        "agent/review", {"sessionId": session, "path": str(path), "action": "undo"}
    )
    assert undone == {"files": []}
    assert editor.buffers[editor.uri("calc.py")].text == OLD.replace("return 1", "return 'mine'")


async def test_an_undo_of_lines_the_user_changed_too_is_a_conflict(
    after: Editor, module_api: MessagesAPIServer
) -> None:
    editor = after
    path = editor.root / "clash.py"
    path.write_text(OLD)
    module_api.enqueue(
        reply(tool_use("read", {"path": "clash.py"})),
        reply(tool_use("write", {"path": "clash.py", "content": NEW})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "change bottom")
    await editor.wait_event(session, "review")
    editor.open("clash.py")
    typed = NEW.replace("return 30", "return 31")
    editor.type_text("clash.py", typed)
    edits = len(editor.applied_edits)

    answer_ = await editor.request(
        "agent/review", {"sessionId": session, "path": str(path), "action": "undo"}
    )
    assert answer_["conflict"]["current"] == typed
    assert len(editor.applied_edits) == edits
    assert editor.buffers[editor.uri("clash.py")].text == typed
