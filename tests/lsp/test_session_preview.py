"""agent/listSessions gives each session a preview line for the panel's history: its last
answer's text on one line, cut at 140 characters; a session with no answer yet has none."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


async def previews(editor: Editor) -> dict[str, str | None]:
    listed = await editor.request("agent/listSessions", {})
    return {s["sessionId"]: s.get("preview") for s in listed["sessions"]}


async def test_the_preview_is_the_last_answer_on_one_line(
    editor: Editor, api: MessagesAPIServer
) -> None:
    empty = await editor.new_session()
    session = await editor.new_session()
    api.enqueue(reply(text("First answer.")))
    await editor.prompt(session, "hello")
    api.enqueue(reply(text("The median was wrong:\n\n  it took the wrong   middle values.")))
    await editor.prompt(session, "why?")
    found = await previews(editor)
    assert found[session] == "The median was wrong: it took the wrong middle values."
    assert found[empty] is None

    api.enqueue(reply(text("word " * 60)))
    await editor.prompt(session, "long")
    line = (await previews(editor))[session]
    assert line is not None and len(line) == 140 and line.endswith("…")
    assert line.startswith("word word")
