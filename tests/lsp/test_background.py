"""agent/prompt `background: true` over real LSP: the session runs detached in its own git
worktree, agent/listSessions lists it with its state, branch and changed files, and the editor's
workspace is untouched."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from agentls.session import background as bg
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.git_support import committed_repo, git
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


@pytest_asyncio.fixture
async def editor(
    tmp_path: Path, api: MessagesAPIServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Editor]:
    committed_repo(tmp_path / "ws", {"app.py": "X = 1\n"})
    # The detached run has no one to ask: the user's rules allow its write.
    user = tmp_path / "data" / "config" / "agentls"
    user.mkdir(parents=True)
    (user / "config.json").write_text(json.dumps({"permissions": {"write": "allow"}}))
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


def writes_notes(body: dict[str, Any]) -> Any:
    last = body["messages"][-1]["content"]
    if isinstance(last, list) and any(b.get("type") == "tool_result" for b in last):
        return reply(text("Notes written."))
    return reply(tool_use("write", {"path": "notes.txt", "content": "from the background"}))


async def test_a_background_prompt_runs_in_its_worktree_and_is_listed_with_its_state(
    editor: Editor, api: MessagesAPIServer
) -> None:
    api.default = writes_notes
    here = await editor.new_session()
    result = await editor.request(
        "agent/prompt", {"sessionId": here, "text": "write the notes", "background": True}
    )
    info = result["background"]
    assert info["branch"] == "agentls/write-the-notes"
    assert result["sessionId"] != here and result.get("messageId") is None
    assert "Started in the background on branch agentls/write-the-notes" in result["text"]
    worktree = Path(info["worktree"])

    record = bg.find(result["sessionId"])
    deadline = time.monotonic() + 60
    while bg.state_of(record)[0] == "running":
        assert time.monotonic() < deadline, "the background run never ended"
        await asyncio.sleep(0.05)

    listed = await editor.request("agent/listSessions", {})
    entry = next(s for s in listed["sessions"] if s["sessionId"] == result["sessionId"])
    assert entry["background"]["state"] == "done"
    assert entry["background"]["changedFiles"] == [{"path": "notes.txt", "added": 1, "removed": 0}]
    assert entry["usage"]["outputTokens"] > 0
    mine = next(s for s in listed["sessions"] if s["sessionId"] == here)
    assert mine.get("background") is None
    assert (worktree / "notes.txt").read_text() == "from the background"
    assert not (editor.root / "notes.txt").exists()

    # Its turns run in its worktree, never in the editor's workspace.
    for method, params in (
        ("agent/prompt", {"sessionId": result["sessionId"], "text": "more"}),
        ("agent/retry", {"sessionId": result["sessionId"]}),
    ):
        with pytest.raises(JsonRpcException, match="is a background session working in"):
            await editor.request(method, params)


async def test_a_clash_gets_the_next_branch_and_a_context_is_invalid_params(
    editor: Editor, api: MessagesAPIServer
) -> None:
    here = await editor.new_session()
    git(editor.root, "branch", "agentls/again")
    api.default = reply(text("ok"))
    first = await editor.request(
        "agent/prompt", {"sessionId": here, "text": "again", "background": True}
    )
    assert first["background"]["branch"] == "agentls/again-2"
    assert "exists already" in first["text"]
    with pytest.raises(JsonRpcException, match="context: a background prompt takes text only"):
        await editor.request(
            "agent/prompt",
            {
                "sessionId": here,
                "text": "with a file",
                "background": True,
                "context": [{"type": "text", "label": "@git", "text": "x"}],
            },
        )
