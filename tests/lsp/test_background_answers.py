"""A detached background run (`agentls run --background`) waiting on a question, answered from the
editor: agent/listSessions' background entry carries the question, agent/approve with its id
writes the answer the run reads (as `agentls background answer` does), and the run goes on; a
requestId the run does not wait on is an error naming requestId. Real processes, a real git
repository, the local Messages API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from agentls.session import background as bg
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_background import answered_tool, wait_for
from tests.cli.test_background_answer import kill_runs_left, start_waiting, writes_then_says
from tests.git_support import committed_repo
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


@pytest_asyncio.fixture
async def editor(
    tmp_path: Path, api: MessagesAPIServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Editor]:
    committed_repo(tmp_path / "ws", {"app.py": "X = 1\n"})
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)
    kill_runs_left()


async def entry_of(editor: Editor, session_id: str) -> dict[str, Any]:
    listed = await editor.request("agent/listSessions", {})
    return next(s for s in listed["sessions"] if s["sessionId"] == session_id)["background"]


async def test_the_editor_lists_and_answers_a_detached_runs_question(
    editor: Editor, api: MessagesAPIServer, env: dict[str, str]
) -> None:
    result: list[str] = []
    api.default = writes_then_says(result)
    record = await asyncio.to_thread(start_waiting, editor.root, env, "task notes")
    tree = Path(record.worktree)

    info = await entry_of(editor, record.session_id)
    assert info["state"] == "waiting"
    [question] = info["questions"]
    assert question["tool"] == "write"
    assert question["input"]["path"] == "notes.txt"
    assert "+from the agent" in question["diff"]

    wrong = {"sessionId": record.session_id, "requestId": "not-asked", "decision": "once"}
    with pytest.raises(JsonRpcException, match="requestId: background session .* does not wait"):
        await editor.request("agent/approve", wrong)
    assert bg.state_of(record)[0] == "waiting"  # a wrong id answers nothing

    answer = {**wrong, "requestId": question["requestId"]}
    assert await editor.request("agent/approve", answer) == {}
    await asyncio.to_thread(wait_for, lambda: bg.state_of(record)[0] == "done", "the run done")
    assert (tree / "notes.txt").read_text() == "from the agent\n"
    assert not (editor.root / "notes.txt").exists()
    assert (await entry_of(editor, record.session_id))["questions"] == []
    with pytest.raises(JsonRpcException, match=r"requestId: .*\(the session is done\)"):
        await editor.request("agent/approve", answer)  # answered already


async def test_an_ask_user_answer_from_the_editor_reaches_the_detached_run(
    editor: Editor, api: MessagesAPIServer, env: dict[str, str]
) -> None:
    said: list[str] = []

    def asks(body: dict[str, Any]) -> Any:
        if answered_tool(body):
            said.append(str(body["messages"][-1]["content"]))
            return reply(text("ok"))
        return reply(tool_use("ask_user", {"question": "Which database?"}))

    api.default = asks
    record = await asyncio.to_thread(start_waiting, editor.root, env, "task pick")
    [question] = (await entry_of(editor, record.session_id))["questions"]
    assert question["tool"] == "ask_user" and question["input"]["question"] == "Which database?"
    answer = {
        "sessionId": record.session_id,
        "requestId": question["requestId"],
        "decision": "once",
        "feedback": "SQLite",
    }
    await editor.request("agent/approve", answer)
    await asyncio.to_thread(wait_for, lambda: bg.state_of(record)[0] == "done", "the run done")
    assert "SQLite" in said[0]
