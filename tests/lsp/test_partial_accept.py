"""Accepting part of a proposal, or the user's own version of it (agent/approve's `edit`), and the
per-hunk code actions of a client without an approvals panel: a real LSP client over stdio, the
real SDK against the local Messages API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.lsp.test_language_requests import (
    RENAME_METHODS,
    LanguageAnswers,
    answering_editor,
    rename_answers,
    rename_calls,
    stop_answering,
    write_project,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

OLD = "alpha = 1\nbeta = 2\ngamma = 3\ndelta = 4\n"
# Two hunks: line 1 and line 4.
NEW = "alpha = 10\nbeta = 2\ngamma = 3\ndelta = 40\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def panel(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A client with an approvals panel, which answers each question itself."""
    editor = await start_editor(module_root / "panel", module_api, Profile())
    editor.auto_approve = False
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A client without an approvals panel: pending edits are offered as code actions."""
    profile = Profile(approvals=False, diagnostics_push=False, saves_edits=False)
    editor = await start_editor(module_root / "plain", module_api, profile)
    editor.answer_message_with = None  # the message request stays unanswered
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def renamer(
    module_root: Path, module_api: MessagesAPIServer
) -> AsyncIterator[tuple[Editor, LanguageAnswers]]:
    """A panel client whose editor answers textDocument/rename."""
    editor, answers = await answering_editor(module_root / "rename", module_api, RENAME_METHODS)
    editor.auto_approve = False
    yield editor, answers
    await stop_answering(editor, answers)


async def propose(
    editor: Editor,
    api: MessagesAPIServer,
    name: str,
    old: str | None,
    new: str,
    tool: str = "write",
) -> tuple[str, dict[str, Any], asyncio.Future[dict[str, Any]]]:
    """The agent reads file `name` (written `old` first; None: as it is, if it exists) and
    proposes `new` for it, and waits for the answer: the session, the permission-request event
    and the running turn."""
    calls = []
    if old is not None:
        (editor.root / name).write_text(old)
    if (editor.root / name).exists():
        calls.append(reply(tool_use("read", {"path": name})))
    if tool == "write":
        calls.append(reply(tool_use("write", {"path": name, "content": new})))
    else:
        assert old is not None
        calls.append(reply(tool_use("edit", {"path": name, "old_string": old, "new_string": new})))
    api.enqueue(*calls, reply(text("done")))
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    request = await editor.wait_event(session, "permission-request")
    return session, request, turn


def answer(session: str, request: dict[str, Any], edit: Any = None, **extra: Any) -> dict[str, Any]:
    params = {"sessionId": session, "requestId": request["requestId"], "decision": "once"}
    if edit is not None:
        params["edit"] = edit
    return {**params, **extra}


def hunks_of(request: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The proposal's one TextDocumentEdit's document and its TextEdits (one per hunk)."""
    [change] = request["edit"]["documentChanges"]
    return change["textDocument"], change["edits"]


def only(document: dict[str, Any], edits: list[dict[str, Any]]) -> dict[str, Any]:
    return {"documentChanges": [{"textDocument": document, "edits": edits}]}


def tool_result(api: MessagesAPIServer) -> str:
    """The last tool result the model was sent (the request after the approved call)."""
    for request in reversed(api.requests):
        last = request.body["messages"][-1]
        if last["role"] == "user" and not isinstance(last["content"], str):
            for block in last["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    if isinstance(content, list):
                        content = "".join(c.get("text", "") for c in content)
                    return str(content)
    raise AssertionError("no tool result was sent")


async def expect_edit_error(editor: Editor, params: dict[str, Any], *words: str) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await editor.request("agent/approve", params)
    assert caught.value.code == -32602, caught.value
    assert "edit" in caught.value.message
    for word in words:
        assert word in caught.value.message, caught.value.message


async def test_the_proposal_is_one_text_edit_per_hunk_and_one_hunk_is_accepted(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    session, request, turn = await propose(editor, module_api, "two.py", OLD, NEW)
    document, edits = hunks_of(request)
    assert [e["newText"] for e in edits] == ["alpha = 10\n", "delta = 40\n"]
    assert [e["range"]["start"]["line"] for e in edits] == [0, 3]
    assert edits[1]["range"]["end"] == {"line": 4, "character": 0}  # whole lines
    await editor.request(
        "agent/approve",
        answer(session, request, only(document, edits[:1]), feedback="delta stays 4"),
    )
    result = await asyncio.wait_for(turn, 20)
    assert result["text"] == "done"
    accepted = "alpha = 10\nbeta = 2\ngamma = 3\ndelta = 4\n"
    assert (editor.root / "two.py").read_text() == accepted
    assert editor.buffers[editor.uri("two.py")].text == accepted
    output = tool_result(module_api)
    assert output.startswith("The user changed your proposal before accepting it")
    assert "-delta = 40\n+delta = 4\n" in output and "-alpha" not in output
    assert "Their note: delta stays 4" in output
    resolved = editor.session_events(session, "permission-resolved")
    assert resolved[-1]["decision"] == "once"


async def test_an_edited_accept_writes_the_users_version(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    old = "def greet():\n    return 'hi'\n\n\nvalue = greet()\n"
    new = "def greet():\n    return 'hello'\n\n\nvalue = greet()\n"
    session, request, turn = await propose(editor, module_api, "greet.py", old, new, tool="edit")
    document, [hunk] = hunks_of(request)
    assert hunk["newText"] == "    return 'hello'\n"
    mine = {**hunk, "newText": "    return 'hello, world'\n"}
    await editor.request("agent/approve", answer(session, request, only(document, [mine])))
    await asyncio.wait_for(turn, 20)
    expected = "def greet():\n    return 'hello, world'\n\n\nvalue = greet()\n"
    assert (editor.root / "greet.py").read_text() == expected
    output = tool_result(module_api)
    assert output.startswith("The user changed your proposal")
    assert "-    return 'hello'\n+    return 'hello, world'" in output
    # The snippet shows what was written, not the proposal.
    assert "Edited greet.py as the user accepted it." in output
    assert "2\t    return 'hello, world'" in output
    assert "Their note" not in output


async def test_bad_edits_are_refused_naming_edit_and_the_question_stays_open(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    (editor.root / "open.py").write_text(OLD)
    buffer = editor.open("open.py")
    editor.type_text("open.py", OLD)  # version 2, the text unchanged
    session, request, turn = await propose(editor, module_api, "open.py", None, NEW)
    document, edits = hunks_of(request)
    assert document["version"] == buffer.version == 2
    other = {**document, "uri": editor.uri("other.py")}
    await expect_edit_error(
        editor, answer(session, request, only(other, edits)), "not a document of the proposal"
    )
    await expect_edit_error(
        editor, answer(session, request, only({**document, "version": 1}, edits)), "version 1"
    )
    await expect_edit_error(
        editor,
        answer(session, request, only(document, edits[:1]), decision="always"),
        "decision once",
    )
    await expect_edit_error(
        editor, answer(session, request, only(document, edits[:1]), decision="reject")
    )
    overlapping = [edits[0], {**edits[0], "newText": "x = 0\n"}]
    await expect_edit_error(
        editor, answer(session, request, only(document, overlapping)), "overlap"
    )
    delete = {"documentChanges": [{"kind": "delete", "uri": document["uri"]}]}
    await expect_edit_error(editor, answer(session, request, delete), "delete")
    create = {"documentChanges": [{"kind": "create", "uri": document["uri"]}]}
    await expect_edit_error(editor, answer(session, request, create), "new file")
    await expect_edit_error(
        editor, answer(session, request, {"documentChanges": 5}), "not a WorkspaceEdit"
    )
    # Still open: an edit equal to the proposal is a plain accept.
    assert not editor.session_events(session, "permission-resolved")
    await editor.request("agent/approve", answer(session, request, only(document, edits)))
    await asyncio.wait_for(turn, 20)
    assert editor.buffers[editor.uri("open.py")].text == NEW
    assert "changed your proposal" not in tool_result(module_api)
    # Applied, the change is the one minimal TextEdit it always was (not the proposal's hunks).
    [applied] = editor.applied_edits[-1]["documentChanges"][0]["edits"]
    assert applied["range"]["start"] == {"line": 0, "character": 9}
    assert applied["range"]["end"] == {"line": 3, "character": 9}
    # A question that proposes no change takes no edit.
    module_api.enqueue(reply(tool_use("bash", {"command": "echo hi"})), reply(text("done")))
    turn = asyncio.ensure_future(editor.prompt(session, "run"))
    bash = await editor.wait_event(session, "permission-request", count=2)
    await expect_edit_error(
        editor, answer(session, bash, only(document, edits)), "does not propose a change"
    )
    await editor.request("agent/approve", answer(session, bash, decision="reject"))
    await asyncio.wait_for(turn, 20)


async def test_accepting_no_hunk_is_a_reject_with_the_feedback(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    session, request, turn = await propose(editor, module_api, "none.py", OLD, NEW)
    document, _ = hunks_of(request)
    await editor.request(
        "agent/approve", answer(session, request, only(document, []), feedback="leave it")
    )
    await asyncio.wait_for(turn, 20)
    assert (editor.root / "none.py").read_text() == OLD
    output = tool_result(module_api)
    assert "rejected" in output and "Their feedback: leave it" in output
    assert editor.session_events(session, "permission-resolved")[-1]["decision"] == "reject"


async def test_part_of_a_new_file_is_created(panel: Editor, module_api: MessagesAPIServer) -> None:
    editor = panel
    session, request, turn = await propose(editor, module_api, "fresh.txt", None, "one\ntwo\n")
    create, change = request["edit"]["documentChanges"]
    assert create["kind"] == "create" and change["edits"][0]["newText"] == "one\ntwo\n"
    mine = [{**change["edits"][0], "newText": "one\n"}]
    edit = {"documentChanges": [create, {"textDocument": change["textDocument"], "edits": mine}]}
    await editor.request("agent/approve", answer(session, request, edit))
    await asyncio.wait_for(turn, 20)
    assert (editor.root / "fresh.txt").read_text() == "one\n"
    output = tool_result(module_api)
    assert output.startswith("The user changed your proposal") and "-two" in output
    assert "Created fresh.txt (1 line)." in output


async def test_a_rename_takes_the_files_the_user_accepted(
    renamer: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    editor, answers = renamer
    where = write_project(editor.root, "ren")
    rename_answers(editor, answers, "ren")
    module_api.enqueue(
        *(reply(tool_use(name, args)) for name, args in rename_calls("ren")), reply(text("done"))
    )
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    request = await editor.wait_event(session, "permission-request")
    changes = request["edit"]["documentChanges"]
    uris = [c["textDocument"]["uri"] for c in changes]
    assert uris == [editor.uri("ren/util.py"), editor.uri("ren/main.py")]
    # Only main.py's change: util.py keeps its name.
    edit = {"documentChanges": [changes[1]]}
    await editor.request("agent/approve", answer(session, request, edit))
    await asyncio.wait_for(turn, 20)
    assert (where / "util.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert "from util import plus" in (where / "main.py").read_text()
    output = tool_result(module_api)
    assert output.startswith("The user changed your proposal")
    assert "-def plus(a, b):\n+def add(a, b):" in output
    assert "in 1 file." in output


async def code_actions(editor: Editor, name: str, line: int) -> list[types.CodeAction]:
    """The approval code actions offered on a line."""
    rng = types.Range(
        start=types.Position(line=line, character=0), end=types.Position(line=line, character=2)
    )
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri(name)),
            range=rng,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    approvals = ("Accept agent edit", "Reject agent edit", "Accept this hunk", "Reject this hunk")
    return [
        a
        for a in actions or []
        if isinstance(a, types.CodeAction) and a.title.startswith(approvals)
    ]


async def test_code_actions_accept_or_reject_the_hunk_under_the_cursor(
    plain: Editor, module_api: MessagesAPIServer
) -> None:
    editor = plain
    (editor.root / "ca.py").write_text(OLD)
    editor.open("ca.py")
    session, request, turn = await propose(editor, module_api, "ca.py", None, NEW)
    on_last = [a.title for a in await code_actions(editor, "ca.py", 3)]
    assert on_last == [
        "Accept agent edit: Overwrite ca.py",
        "Reject agent edit: Overwrite ca.py",
        "Accept this hunk: Overwrite ca.py, line 4",
        "Reject this hunk: Overwrite ca.py, line 4",
    ]
    on_first = [a.title for a in await code_actions(editor, "ca.py", 0)]
    assert on_first == [
        "Accept agent edit: Overwrite ca.py",
        "Reject agent edit: Overwrite ca.py",
        "Accept this hunk: Overwrite ca.py, line 1",
        "Reject this hunk: Overwrite ca.py, line 1",
    ]
    assert await code_actions(editor, "ca.py", 1) == []  # an unchanged line
    [reject] = [
        a for a in await code_actions(editor, "ca.py", 3) if a.title.startswith("Reject this")
    ]
    assert reject.command is not None
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.approve", arguments=reject.command.arguments)
    )
    await asyncio.wait_for(turn, 20)
    accepted = "alpha = 10\nbeta = 2\ngamma = 3\ndelta = 4\n"
    assert editor.buffers[editor.uri("ca.py")].text == accepted
    assert "changed your proposal" in tool_result(module_api)
    assert await code_actions(editor, "ca.py", 3) == []  # answered: no longer offered

    # One hunk only: "Reject this hunk" rejects the edit.
    session, request, turn = await propose(editor, module_api, "ca.py", None, OLD)
    actions = await code_actions(editor, "ca.py", 0)
    [reject] = [a for a in actions if a.title.startswith("Reject this hunk")]
    assert reject.command is not None and reject.command.arguments is not None
    assert reject.command.arguments[0]["decision"] == "reject"
    assert "edit" not in reject.command.arguments[0]
    [accept] = [a for a in actions if a.title.startswith("Accept this hunk")]
    assert accept.command is not None
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.approve", arguments=accept.command.arguments)
    )
    await asyncio.wait_for(turn, 20)
    assert editor.buffers[editor.uri("ca.py")].text == OLD
    assert "changed your proposal" not in tool_result(module_api)


async def test_what_was_kept_of_each_hunk_is_stored_with_the_call(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    # The panel's card says "1 of 2 hunks kept" after a window reload: read from the history.
    editor = panel
    session, request, turn = await propose(editor, module_api, "kept.py", OLD, NEW)
    document, edits = hunks_of(request)
    await editor.request("agent/approve", answer(session, request, only(document, edits[1:])))
    await asyncio.wait_for(turn, 20)
    history = await editor.request("agent/getMessages", {"sessionId": session})
    parts = [p for m in history["messages"] for p in m["parts"] if p["type"] == "tool"]
    write = next(p for p in parts if p["tool"] == "write")
    assert write["keptHunks"] == [False, True]
    read = next(p for p in parts if p["tool"] == "read")
    assert "keptHunks" not in read or read["keptHunks"] is None


async def test_a_whole_accept_stores_no_hunks(panel: Editor, module_api: MessagesAPIServer) -> None:
    editor = panel
    session, request, turn = await propose(editor, module_api, "whole.py", OLD, NEW)
    await editor.request("agent/approve", answer(session, request))
    await asyncio.wait_for(turn, 20)
    history = await editor.request("agent/getMessages", {"sessionId": session})
    write = next(
        p
        for m in history["messages"]
        for p in m["parts"]
        if p["type"] == "tool" and p["tool"] == "write"
    )
    assert write.get("keptHunks") is None
