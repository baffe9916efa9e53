"""agent/proposeEdit (a code block's Apply in the panel): the user's change is asked about like
the agent's write of the file (permission-request with the diff and the edit), applied once
accepted, left alone when rejected, refused outside the workspace. A real LSP client over stdio."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(module_root / "propose", module_api, Profile())
    editor.auto_approve = False
    yield editor
    await stop_editor(editor)


async def proposed(editor: Editor, name: str, text: str) -> tuple[str, dict, asyncio.Future]:
    session = await editor.new_session()
    future = asyncio.ensure_future(
        editor.request("agent/proposeEdit", {"sessionId": session, "path": name, "text": text})
    )
    request = await editor.wait_event(session, "permission-request")
    return session, request, future


async def test_an_accepted_proposal_is_written_through_the_editor(editor: Editor) -> None:
    (editor.root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    new = "def add(a, b):\n    return a + b\n"
    session, request, future = await proposed(editor, "calc.py", new)
    assert request["tool"] == "write"
    assert request["title"] == "Apply to calc.py"
    assert "-    return a - b\n+    return a + b" in request["diff"]
    assert request["edit"]["documentChanges"], request["edit"]
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "once"},
    )
    assert await asyncio.wait_for(future, 20) == {"decision": "once", "applied": True}
    assert (editor.root / "calc.py").read_text() == new
    resolved = editor.session_events(session, "permission-resolved")
    assert resolved[-1]["decision"] == "once"
    # The transcript's card for it is closed by a tool-result; no turn ran.
    [result] = results_for(editor, session, request["callId"])
    assert result["status"] == "completed" and result["output"] == "Applied to calc.py."
    assert not editor.session_events(session, "turn-start")


def results_for(editor: Editor, session: str, call_id: str) -> list[dict]:
    return [e for e in editor.session_events(session, "tool-result") if e["callId"] == call_id]


async def test_a_rejected_proposal_leaves_the_file_as_it_was(editor: Editor) -> None:
    (editor.root / "keep.py").write_text("x = 1\n")
    session, request, future = await proposed(editor, "keep.py", "x = 2\n")
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "reject"},
    )
    assert await asyncio.wait_for(future, 20) == {"decision": "reject", "applied": False}
    assert (editor.root / "keep.py").read_text() == "x = 1\n"
    [result] = results_for(editor, session, request["callId"])
    assert result["status"] == "error" and result["output"] == "Rejected: keep.py was not changed."


async def test_the_same_text_asks_nothing(editor: Editor) -> None:
    (editor.root / "same.py").write_text("y = 1\n")
    session = await editor.new_session()
    result = await editor.request(
        "agent/proposeEdit", {"sessionId": session, "path": "same.py", "text": "y = 1\n"}
    )
    assert result == {"decision": "unchanged", "applied": False}
    assert not editor.session_events(session, "permission-request")


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd", ".git/config"])
async def test_a_path_outside_the_workspace_or_protected_is_refused(
    editor: Editor, path: str
) -> None:
    session = await editor.new_session()
    with pytest.raises(JsonRpcException) as caught:
        await editor.request(
            "agent/proposeEdit", {"sessionId": session, "path": path, "text": "boom\n"}
        )
    assert caught.value.code == -32602
    assert "path" in caught.value.message
    assert not (editor.root.parent / "outside.py").exists()
