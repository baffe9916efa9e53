""" "Always" over LSP: the permission-request event carries what "always" allows (`always`, absent
when it is not offered), agent/approve takes a `scope`, and a client without an approvals panel
gets buttons that name the grant in window/showMessageRequest."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import server_env, start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

pytestmark = pytest.mark.asyncio(loop_scope="module")

PLAIN = dict(approvals=False, diagnostics_push=False, saves_edits=False, work_done_progress=False)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def panel(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(module_root / "panel", module_api, Profile())
    editor.auto_approve = False
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def by_message(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(module_root / "message", module_api, Profile(**PLAIN))
    yield editor
    await stop_editor(editor)


def project_grants(data: Path, root: Path, api: MessagesAPIServer) -> list[dict[str, object]]:
    """`agentls permissions --json` for that workspace, as the user would run it."""
    proc = subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "permissions", "--cwd", str(root), "--json"],
        env=server_env(api, data),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


async def approve(editor: Editor, params: dict[str, object]) -> None:
    await editor.request("agent/approve", params)


async def test_the_event_names_the_grant_and_project_scope_is_kept(
    panel: Editor, module_api: MessagesAPIServer, module_root: Path
) -> None:
    editor = panel
    module_api.enqueue(
        reply(tool_use("bash", {"command": "git status --porcelain"})),
        reply(tool_use("bash", {"command": "git status"})),
        reply(text("ok")),
    )
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "status"))
    request = await editor.wait_event(session, "permission-request")
    assert request["always"] == "Always allow `git status` commands"
    await approve(
        editor,
        {
            "sessionId": session,
            "requestId": request["requestId"],
            "decision": "always",
            "scope": "project",
        },
    )
    result = await asyncio.wait_for(turn, 20)
    assert result["finishReason"] == "end_turn"
    # The second `git status` did not ask.
    assert len(editor.session_events(session, "permission-request")) == 1
    assert editor.session_events(session, "permission-resolved")[0]["decision"] == "always"
    grants = project_grants(module_root / "panel" / "data", editor.root, module_api)
    assert [(g["tool"], g["pattern"], g["label"]) for g in grants] == [
        ("bash", "git status", "Always allow `git status` commands")
    ]
    # Another session of the same workspace does not ask either.
    module_api.enqueue(reply(tool_use("bash", {"command": "git status -s"})), reply(text("ok")))
    other = await editor.new_session()
    await editor.prompt(other, "again")
    assert not editor.session_events(other, "permission-request")


async def test_always_not_offered_is_absent_and_counts_once(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    line = '"$CMD" hi'
    module_api.enqueue(reply(tool_use("bash", {"command": line})), reply(text("ok")))
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    request = await editor.wait_event(session, "permission-request")
    assert "always" not in request
    await approve(
        editor, {"sessionId": session, "requestId": request["requestId"], "decision": "always"}
    )
    await asyncio.wait_for(turn, 20)
    assert editor.session_events(session, "permission-resolved")[0]["decision"] == "once"
    content = module_api.requests[-1].body["messages"][-1]["content"][0]["content"]
    assert '"always" is not offered for this call' in content


async def test_a_bad_scope_is_invalid_params_naming_it(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    editor = panel
    module_api.enqueue(reply(tool_use("bash", {"command": "ls -la"})), reply(text("ok")))
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    request = await editor.wait_event(session, "permission-request")
    assert request["always"] == "Always allow `ls` commands"
    params = {"sessionId": session, "requestId": request["requestId"], "decision": "always"}
    with pytest.raises(JsonRpcException) as caught:
        await approve(editor, {**params, "scope": "machine"})
    assert caught.value.code == -32602 and "scope" in caught.value.message
    await approve(editor, {**params, "scope": "session"})
    await asyncio.wait_for(turn, 20)
    assert editor.session_events(session, "permission-resolved")[0]["decision"] == "always"


async def test_message_buttons_name_the_grant_and_choose_its_scope(
    by_message: Editor, module_api: MessagesAPIServer, module_root: Path
) -> None:
    editor = by_message
    (editor.root / "notes").mkdir(exist_ok=True)
    module_api.enqueue(
        reply(tool_use("write", {"path": "notes/**", "content": "literal\n"})),
        reply(tool_use("write", {"path": "notes/other.md", "content": "other\n"})),
        reply(text("ok")),
    )
    editor.answer_message_with = "Always allow writes of notes/** (this project)"
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    # The second write asks again; the same title is no button of that question: a Reject.
    while len(editor.message_requests) < 2:
        await asyncio.sleep(0.02)
    first, second = editor.message_requests[-2:]
    assert [a.title for a in first.actions or []] == [
        "Allow once",
        "Always allow writes of notes/** (this session)",
        "Always allow writes of notes/** (this project)",
        "Reject",
    ]
    assert "notes/other.md" in second.message
    await asyncio.wait_for(turn, 30)
    editor.answer_message_with = "Allow once"
    assert (editor.root / "notes" / "**").read_text() == "literal\n"
    grants = project_grants(module_root / "message" / "data", editor.root, module_api)
    assert [(g["tool"], g["pattern"], g["exact"]) for g in grants] == [("write", "notes/**", True)]
    assert not os.path.exists(editor.root / "notes" / "other.md")
