"""Review "after" and a rename across files (the Agent, a real language server, the real SDK
against the local Messages API, a real store): applied without a question, every file pending;
one undone, the other kept; a revert of the turn leaves nothing pending."""

from __future__ import annotations

import asyncio

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.language.conftest import MAIN, language_servers, make_project


async def test_a_rename_is_applied_at_once_and_each_file_reviewed(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"languageServers": language_servers(), "review": "after"})
    make_project(h.root)
    greet = h.root / "shop" / "greet.py"
    app = h.root / "app.py"
    rename = {"path": "shop/greet.py", "symbol": "greet", "new_name": "salute"}
    api.enqueue(
        reply(tool_use("read", {"path": "shop/greet.py"}), tool_use("read", {"path": "app.py"})),
        reply(tool_use("rename", rename)),
        reply(text("renamed")),
    )
    session = (await h.agent.new_session()).id
    result = await asyncio.wait_for(h.agent.prompt(session, "rename greet to salute"), 60)
    assert result.text == "renamed", result.error
    assert h.of_type("permission-request") == []
    assert "salute(" in app.read_text() and "def salute(name):" in greet.read_text()
    # One review event for the change to both files.
    [event] = h.of_type("review")
    assert {f.path for f in event.files} == {str(app), str(greet)}
    assert [f.path for f in await h.agent.list_review(session)] == [f.path for f in event.files]

    # Undo app.py (its workspace-relative path), keep greet.py: both leave the review.
    files, conflict = await h.agent.review(session, "app.py", "undo")
    assert conflict is None and [f.path for f in files] == [str(greet)]
    assert app.read_text() == MAIN and "def salute(name):" in greet.read_text()
    files, _ = await h.agent.review(session, str(greet), "keep")
    assert files == [] and h.of_type("review")[-1].files == []


async def test_a_reverted_turn_leaves_nothing_pending(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"review": "after"})
    target = h.root / "a.txt"
    target.write_text("one\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"})),
        reply(tool_use("write", {"path": "a.txt", "content": "two\n"})),
        reply(text("done")),
    )
    session = (await h.agent.new_session()).id
    await asyncio.wait_for(h.agent.prompt(session, "change"), 60)
    assert [f.agent for f in await h.agent.list_review(session)] == ["two\n"]
    first = (await h.agent.session(session)).messages[0].id
    await h.agent.revert(session, first)
    assert target.read_text() == "one\n"
    # The reverted messages' changes no longer count: nothing to keep or undo.
    assert await h.agent.list_review(session) == []
