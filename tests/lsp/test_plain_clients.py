"""Clients that declare less than ours: no documentChanges, no applyEdit, no approvals panel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

pytestmark = pytest.mark.asyncio(loop_scope="module")

PLAIN = dict(approvals=False, diagnostics_push=False, saves_edits=False, work_done_progress=False)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def changes_only(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(
        module_root / "changes",
        module_api,
        Profile(document_changes=False, resource_operations=(), **PLAIN),
        {"permissions": {"*": "allow"}},
    )
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def no_apply(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(
        module_root / "noapply",
        module_api,
        Profile(apply_edit=False, **PLAIN),
        {"permissions": {"*": "allow"}},
    )
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def asks_by_message(
    module_root: Path, module_api: MessagesAPIServer
) -> AsyncIterator[Editor]:
    editor = await start_editor(module_root / "ask", module_api, Profile(**PLAIN))
    yield editor
    await stop_editor(editor)


def last_result(api: MessagesAPIServer) -> dict[str, object]:
    return api.requests[-1].body["messages"][-1]["content"][0]  # type: ignore[no-any-return]


async def test_without_document_changes_edits_are_plain_changes(
    changes_only: Editor, module_api: MessagesAPIServer
) -> None:
    editor = changes_only
    (editor.root / "c.py").write_text("c = 1\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "c.py"})),
        reply(tool_use("edit", {"path": "c.py", "old_string": "c = 1", "new_string": "c = 2"})),
        reply(tool_use("write", {"path": "fresh.txt", "content": "new file\n"})),
        reply(text("ok")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "go")
    edit = editor.applied_edits[0]
    assert "documentChanges" not in edit and list(edit["changes"]) == [editor.uri("c.py")]
    # Not open and no savesEdits: the server wrote the edit through to disk.
    assert (editor.root / "c.py").read_text() == "c = 2\n"
    # A new file with no CreateFile support is written directly.
    assert (editor.root / "fresh.txt").read_text() == "new file\n"
    # with the mode any new file of the user's gets (the umask's), not a private one
    (editor.root / "probe.txt").write_text("")
    mode = (editor.root / "probe.txt").stat().st_mode & 0o777
    assert (editor.root / "fresh.txt").stat().st_mode & 0o777 == mode
    assert len(editor.applied_edits) == 1
    # No pushed diagnostics: the server's own checks ran and were published.
    output = module_api.requests[-2].body["messages"][-1]["content"][0]["content"]
    assert (
        "Diagnostics (agentls syntax check only: not names, types or tests): no syntax errors"
        in output
    )


async def test_own_checks_report_a_syntax_error(
    changes_only: Editor, module_api: MessagesAPIServer
) -> None:
    editor = changes_only
    (editor.root / "syn.py").write_text("def ok():\n    return 1\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "syn.py"})),
        reply(
            tool_use(
                "edit", {"path": "syn.py", "old_string": "return 1", "new_string": "return (1"}
            )
        ),
        reply(text("oops")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "break")
    output = last_result(module_api)["content"]
    assert "SyntaxError" in str(output) and "line 2" in str(output)
    published = editor.client.diagnostics.get(editor.uri("syn.py"))
    assert published and "SyntaxError" in published[0].message


async def test_without_apply_edit_the_server_writes_and_refuses_dirty_buffers(
    no_apply: Editor, module_api: MessagesAPIServer
) -> None:
    editor = no_apply
    (editor.root / "w.py").write_text("w = 1\n")
    (editor.root / "dirty.py").write_text("d = 1\n")
    editor.open("dirty.py")
    editor.type_text("dirty.py", "d = 1\n# unsaved\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "w.py"}), tool_use("read", {"path": "dirty.py"})),
        reply(
            tool_use("edit", {"path": "w.py", "old_string": "w = 1", "new_string": "w = 2"}),
            tool_use("edit", {"path": "dirty.py", "old_string": "d = 1", "new_string": "d = 2"}),
        ),
        reply(text("ok")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "go")
    results = module_api.requests[-1].body["messages"][-1]["content"]
    assert not results[0].get("is_error") and (editor.root / "w.py").read_text() == "w = 2\n"
    assert results[1]["is_error"] and "unsaved changes" in results[1]["content"]
    assert (editor.root / "dirty.py").read_text() == "d = 1\n"
    assert not editor.applied_edits


async def test_ask_through_show_message_request(
    asks_by_message: Editor, module_api: MessagesAPIServer
) -> None:
    editor = asks_by_message
    (editor.root / "m.py").write_text("m = 1\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "m.py"})),
        reply(tool_use("edit", {"path": "m.py", "old_string": "m = 1", "new_string": "m = 2"})),
        reply(tool_use("bash", {"command": "echo from-bash"})),
        reply(text("ok")),
    )
    editor.answer_message_with = "Allow once"
    session = await editor.new_session()
    await editor.prompt(session, "go")
    assert (editor.root / "m.py").read_text() == "m = 2\n"
    messages = [m.message for m in editor.message_requests[-2:]]
    assert "Edit m.py" in messages[0] and "+m = 2" in messages[0]
    assert "echo from-bash" in messages[1]
    # The "always" buttons say exactly what they allow.
    assert [a.title for a in editor.message_requests[-1].actions or []] == [
        "Allow once",
        "Always allow `echo` commands (this session)",
        "Always allow `echo` commands (this project)",
        "Reject",
    ]


async def test_pending_edit_offered_as_code_actions_and_execute_command(
    asks_by_message: Editor, module_api: MessagesAPIServer
) -> None:
    editor = asks_by_message
    (editor.root / "ca.py").write_text("first = 1\nsecond = 2\n")
    editor.open("ca.py")
    module_api.enqueue(
        reply(tool_use("read", {"path": "ca.py"})),
        reply(
            tool_use(
                "edit", {"path": "ca.py", "old_string": "second = 2", "new_string": "second = 20"}
            )
        ),
        reply(text("ok")),
    )
    editor.answer_message_with = None  # the message request stays unanswered
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    request = await editor.wait_event(session, "permission-request")
    rng = types.Range(
        start=types.Position(line=1, character=0), end=types.Position(line=1, character=3)
    )
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("ca.py")),
            range=rng,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    accept = [a for a in actions if a.title.startswith("Accept agent edit")]
    assert accept and accept[0].command.arguments[0]["requestId"] == request["requestId"]
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.approve", arguments=accept[0].command.arguments)
    )
    result = await asyncio.wait_for(turn, 20)
    assert result["finishReason"] == "end_turn"
    assert editor.buffers[editor.uri("ca.py")].text == "first = 1\nsecond = 20\n"
    assert (editor.root / "ca.py").read_text() == "first = 1\nsecond = 20\n"
    # Answered: no longer offered.
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("ca.py")),
            range=rng,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not [a for a in actions if a.title.startswith("Accept agent edit")]
    editor.answer_message_with = "Allow once"


async def test_configuration_change_applies_to_the_next_call(
    asks_by_message: Editor, module_api: MessagesAPIServer
) -> None:
    editor = asks_by_message
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"agent": {"permissions": {"bash": "deny"}}})
    )
    module_api.enqueue(reply(tool_use("bash", {"command": "echo nope"})), reply(text("ok")))
    before = len(editor.message_requests)
    session = await editor.new_session()
    await editor.prompt(session, "go")
    assert len(editor.message_requests) == before  # denied by the new rule, nobody asked
    result = last_result(module_api)
    assert result["is_error"] and "denied" in str(result["content"])
