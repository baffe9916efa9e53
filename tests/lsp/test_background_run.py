"""Background sessions run inside the LSP server: a question of one comes to the editor as a
permission-request event carrying its session id, agent/listSessions shows it waiting, and
agent/approve answers it; its edit lands in its worktree, never in the editor's workspace."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentls.session import background as bg
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.lsp.test_background import git
from tests.waiting import until


async def editor_on_a_repository(
    tmp_path: Path, api: MessagesAPIServer, monkeypatch: pytest.MonkeyPatch
) -> Editor:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    git(workspace, "init", "--quiet", "-b", "main")
    (workspace / "app.py").write_text("X = 1\n")
    git(workspace, "add", "app.py")
    git(workspace, "commit", "--quiet", "-m", "first")
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    started = await start_editor(tmp_path, api, Profile())
    started.auto_approve = False  # the test answers the question itself
    return started


@pytest_asyncio.fixture
async def editor(
    tmp_path: Path, api: MessagesAPIServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Editor]:
    started = await editor_on_a_repository(tmp_path, api, monkeypatch)
    yield started
    await stop_editor(started)


def edits_app(body: dict[str, Any]) -> Any:
    """Reads app.py, edits it (a call that asks), then says so."""
    results = sum(
        1
        for m in body["messages"]
        if isinstance(m["content"], list)
        and any(b.get("type") == "tool_result" for b in m["content"])
    )
    if results == 0:
        return reply(tool_use("read", {"path": "app.py"}))
    if results == 1:
        return reply(
            tool_use("edit", {"path": "app.py", "old_string": "X = 1", "new_string": "X = 2"})
        )
    return reply(text("Changed X."))


async def background_entry(editor: Editor, session_id: str) -> dict[str, Any]:
    listed = await editor.request("agent/listSessions", {})
    entry: dict[str, Any] = next(s for s in listed["sessions"] if s["sessionId"] == session_id)
    return entry["background"]


async def test_a_question_of_a_background_session_is_answered_in_the_editor(
    editor: Editor, api: MessagesAPIServer
) -> None:
    api.default = edits_app
    here = await editor.new_session()
    started = await editor.request(
        "agent/prompt", {"sessionId": here, "text": "change x", "background": True}
    )
    session_id = started["sessionId"]
    worktree = Path(started["background"]["worktree"])

    question = await editor.wait_event(session_id, "permission-request", timeout=60)
    assert question["tool"] == "edit"
    assert "X = 2" in json.dumps(question)
    assert (await background_entry(editor, session_id))["state"] == "waiting"
    assert bg.state_of(bg.find(session_id))[0] == "waiting"  # `agentls background list` too
    assert (worktree / "app.py").read_text() == "X = 1\n"

    await editor.request(
        "agent/approve",
        {"sessionId": session_id, "requestId": question["requestId"], "decision": "once"},
    )
    await editor.wait_event(session_id, "turn-end", timeout=60)
    record = bg.find(session_id)
    await until(
        lambda: bg.state_of(record)[0] not in ("running", "waiting"),
        "its result line is written once its Agent is closed",
    )
    entry = await background_entry(editor, session_id)
    assert entry["state"] == "done"
    assert entry["changedFiles"] == [{"path": "app.py", "added": 1, "removed": 1}]
    assert (worktree / "app.py").read_text() == "X = 2\n"
    assert (editor.root / "app.py").read_text() == "X = 1\n"
    assert not editor.session_events(here, "permission-request")


async def test_a_background_session_left_waiting_when_the_server_stops_is_interrupted_and_kept(
    tmp_path: Path, api: MessagesAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.default = edits_app
    editor = await editor_on_a_repository(tmp_path, api, monkeypatch)
    try:
        here = await editor.new_session()
        started = await editor.request(
            "agent/prompt", {"sessionId": here, "text": "change x", "background": True}
        )
        session_id = started["sessionId"]
        await editor.wait_event(session_id, "permission-request", timeout=60)
    finally:
        await stop_editor(editor)
    record = bg.find(session_id)
    await until(
        lambda: bg.state_of(record)[0] not in ("running", "waiting"),
        "the server process exits after its shutdown",
        timeout=120,
    )
    state, reason = bg.state_of(record)
    assert state == "failed" and reason is not None and "interrupted" in reason
    assert Path(record.worktree, "app.py").read_text() == "X = 1\n"
    assert record.branch in git(Path(record.repo_root), "branch", "--list", record.branch)


async def test_stopping_a_background_session_from_the_editor_ends_its_turn_cancelled(
    editor: Editor, api: MessagesAPIServer
) -> None:
    api.default = edits_app
    here = await editor.new_session()
    started = await editor.request(
        "agent/prompt", {"sessionId": here, "text": "change x", "background": True}
    )
    session_id = started["sessionId"]
    await editor.wait_event(session_id, "permission-request", timeout=60)
    answer = await editor.request("agent/cancel", {"sessionId": session_id})
    assert answer["cancelled"] is True
    end = await editor.wait_event(session_id, "turn-end", timeout=60)
    assert end["finishReason"] == "cancelled"
    record = bg.find(session_id)
    await until(
        lambda: bg.state_of(record)[0] not in ("running", "waiting"),
        "its result line is written once its Agent is closed",
    )
    assert bg.state_of(record)[0] == "failed"
    assert Path(record.worktree, "app.py").read_text() == "X = 1\n"
