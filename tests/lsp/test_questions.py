"""ask_user over LSP: a panel gets the question as a permission-request event (tool ask_user,
the question and its choices) and answers with agent/approve, the answer in `feedback`; a client
without the approvals capability gets a window/showMessageRequest with a button per choice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def panel(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(module_root / "panel", module_api, Profile())
    editor.auto_approve = False
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(module_root / "plain", module_api, Profile(approvals=False))
    yield editor
    await stop_editor(editor)


def last_result(api: MessagesAPIServer) -> dict[str, Any]:
    content = api.requests[-1].body["messages"][-1]["content"]
    return next(b for b in content if b.get("type") == "tool_result")  # type: ignore[no-any-return]


async def test_the_panel_answers_a_question_with_its_own_words(
    panel: Editor, module_api: MessagesAPIServer
) -> None:
    call = {"question": "Which database?", "choices": ["SQLite", "Postgres"]}
    module_api.enqueue(reply(tool_use("ask_user", call)), reply(text("ok")))
    session = await panel.new_session()
    turn = asyncio.ensure_future(panel.prompt(session, "set it up"))
    question = await panel.wait_event(session, "permission-request")
    assert question["tool"] == "ask_user" and question["input"] == call
    await panel.request(
        "agent/approve",
        {
            "sessionId": session,
            "requestId": question["requestId"],
            "decision": "once",
            "feedback": "DuckDB, it is read-only",
        },
    )
    assert (await asyncio.wait_for(turn, 20))["finishReason"] == "end_turn"
    assert last_result(module_api)["content"] == "The user answered: DuckDB, it is read-only"


async def test_a_client_without_the_panel_picks_a_choice_from_a_message_request(
    plain: Editor, module_api: MessagesAPIServer
) -> None:
    call = {"question": "Which database?", "choices": ["SQLite", "Postgres"]}
    module_api.enqueue(reply(tool_use("ask_user", call)), reply(text("ok")))
    plain.answer_message_with = "Postgres"
    session = await plain.new_session()
    await plain.prompt(session, "set it up")
    asked = plain.message_requests[-1]
    assert asked.message == "agentls asks: Which database?"
    assert [a.title for a in asked.actions or []] == ["SQLite", "Postgres", "Skip"]
    assert last_result(module_api)["content"] == "The user answered: Postgres"


async def test_an_open_question_in_a_message_request_tells_the_model_to_offer_choices(
    plain: Editor, module_api: MessagesAPIServer
) -> None:
    module_api.enqueue(reply(tool_use("ask_user", {"question": "Name it?"})), reply(text("ok")))
    plain.answer_message_with = "Skip"
    session = await plain.new_session()
    await plain.prompt(session, "name it")
    assert [a.title for a in plain.message_requests[-1].actions or []] == ["Skip"]
    result = last_result(module_api)
    assert result["is_error"] and "ask again with choices" in result["content"]
