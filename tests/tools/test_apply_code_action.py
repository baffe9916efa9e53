"""apply_code_action through the loop (the Agent, the real SDK against the local Messages API, a
real store) with real language servers run headless: ruff's organize-imports asked about once as
one edit and reverted with the turn; the edit rules of the file it changes; an unread file and an
unknown title refused; pyright's create-type-stub, a command that writes files itself, refused
with nothing written; under review "after", applied at once and pending review."""

from __future__ import annotations

import asyncio
from typing import Any

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory
from tests.tools.code_action_support import (
    SORTED,
    UNSORTED,
    pyright_servers,
    ruff_servers,
    stubless_project,
)

ORGANIZE = {"path": "app.py", "line": 1, "end_line": 2, "title": "Ruff: Organize imports"}


def tool_result(h: Harness, request: int) -> str:
    """The text of the first tool result the model got in its `request`-th request."""
    body = h.accepted_requests()[request]
    content: Any = body["messages"][-1]["content"][0]
    assert content["type"] == "tool_result"
    return str(content["content"])


async def test_organize_imports_is_one_reviewed_edit_reverted_with_the_turn(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"languageServers": ruff_servers()})
    app = h.root / "app.py"
    app.write_text(UNSORTED)
    api.enqueue(
        reply(tool_use("read", {"path": "app.py"})),
        reply(tool_use("code_actions", {"path": "app.py", "line": 1, "end_line": 2})),
        reply(tool_use("apply_code_action", ORGANIZE)),
        reply(text("sorted")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "sort the imports"))
    asked = await h.wait_for("permission-request", timeout=60)
    # Asked as an edit of every file it changes, with the texts before and after.
    assert asked.tool == "apply_code_action"
    assert asked.title == "Ruff: Organize imports (1 file)"
    [change] = asked.changes
    assert change.path == str(app) and change.old_text == UNSORTED and change.new_text == SORTED
    assert "+import os\n import sys\n-import os" in asked.diff
    assert app.read_text() == UNSORTED  # nothing written before the answer
    h.agent.approve(session.id, asked.request_id, "once")
    result = await asyncio.wait_for(turn, 60)
    assert result.text == "sorted", result.error
    assert "Ruff: Organize imports" in tool_result(h, 2)
    assert "Applied 'Ruff: Organize imports': 1 file changed." in tool_result(h, 3)
    assert app.read_text() == SORTED
    # One recorded change: reverting the turn puts the file back.
    state = await h.agent.session(session.id)
    await h.agent.revert(session.id, state.messages[0].id)
    assert app.read_text() == UNSORTED


async def test_a_fix_in_a_file_the_rules_deny_is_refused(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    permissions = [
        {"tool": "edit", "action": "allow"},
        {"tool": "edit", "pattern": "app.py", "action": "deny"},
    ]
    h = await make_harness({"languageServers": ruff_servers(), "permissions": permissions})
    app = h.root / "app.py"
    app.write_text(UNSORTED)
    fix = {"path": "app.py", "line": 1, "title": "Ruff (F401): Remove unused import: `sys`"}
    api.enqueue(
        reply(tool_use("read", {"path": "app.py"})),
        reply(tool_use("apply_code_action", fix)),
        reply(text("could not")),
    )
    session = await h.agent.new_session()
    result = await asyncio.wait_for(h.agent.prompt(session.id, "remove it"), 60)
    assert result.text == "could not", result.error
    assert "denied" in tool_result(h, 2).lower()
    assert h.of_type("permission-request") == []
    assert app.read_text() == UNSORTED


async def test_an_unread_file_or_an_unknown_title_changes_nothing(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"languageServers": ruff_servers()})
    app = h.root / "app.py"
    app.write_text(UNSORTED)
    api.enqueue(
        reply(tool_use("apply_code_action", ORGANIZE)),
        reply(tool_use("read", {"path": "app.py"})),
        reply(tool_use("apply_code_action", {**ORGANIZE, "title": "Sort everything"})),
        reply(text("gave up")),
    )
    session = await h.agent.new_session()
    result = await asyncio.wait_for(h.agent.prompt(session.id, "sort"), 60)
    assert result.text == "gave up", result.error
    assert "You have not read app.py in this session" in tool_result(h, 1)
    unknown = tool_result(h, 3)
    assert "No code action titled 'Sort everything' at app.py:1-2" in unknown
    assert "  Ruff: Organize imports" in unknown  # the titles there, to choose from
    assert app.read_text() == UNSORTED and h.of_type("permission-request") == []


async def test_a_command_that_writes_files_itself_is_refused(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"languageServers": pyright_servers(), "sandbox": "auto"})
    app = stubless_project(h.root)
    stub = {"path": "app.py", "line": 1, "title": 'Create Type Stub For "fakepkg"'}
    api.enqueue(
        reply(tool_use("read", {"path": "app.py"})),
        reply(tool_use("code_actions", {"path": "app.py", "line": 1})),
        reply(tool_use("apply_code_action", stub)),
        reply(text("refused")),
    )
    session = await h.agent.new_session()
    result = await asyncio.wait_for(h.agent.prompt(session.id, "add stubs"), 120)
    assert result.text == "refused", result.error
    listed = tool_result(h, 2)
    assert 'Create Type Stub For "fakepkg" [quickfix]' in listed
    assert "(runs the language server's command pyright.createtypestub)" in listed
    refused = tool_result(h, 3)
    assert "only runs the command pyright.createtypestub, which was not run" in refused
    assert "writes files" in refused and "Nothing was changed." in refused
    assert not (h.root / "typings").exists()
    assert app.read_text() == "import fakepkg\n\nprint(fakepkg.f(1))\n"
    assert h.of_type("permission-request") == []


async def test_under_review_after_the_action_is_applied_at_once_and_pending(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"languageServers": ruff_servers(), "review": "after"})
    app = h.root / "app.py"
    app.write_text(UNSORTED)
    api.enqueue(
        reply(tool_use("read", {"path": "app.py"})),
        reply(tool_use("apply_code_action", ORGANIZE)),
        reply(text("sorted")),
    )
    session = await h.agent.new_session()
    result = await asyncio.wait_for(h.agent.prompt(session.id, "sort the imports"), 60)
    assert result.text == "sorted", result.error
    assert h.of_type("permission-request") == [] and app.read_text() == SORTED
    [pending] = await h.agent.list_review(session.id)
    assert pending.path == str(app)
    files, conflict = await h.agent.review(session.id, "app.py", "undo")
    assert conflict is None and files == [] and app.read_text() == UNSORTED
