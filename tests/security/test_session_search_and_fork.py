"""Session management in the user's and the model's words: FTS5 syntax in a search taken as plain
words, a fork taken mid-turn sends no dangling tool call. Each attack is counted in the security
table (tests/security/conftest.py)."""

from __future__ import annotations

import asyncio

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures

FTS = "search query syntax"


# ---- session search: FTS5 syntax in the user's words ----------------------------------------

QUERIES = [
    '"',
    'a" OR "b',
    "NEAR(a b, 1)",
    "text:foo",
    "^start",
    "a AND",
    "* OR *",
    "-x",
    "(",
    "a\x00b",
]


@pytest.mark.parametrize("query", QUERIES)
async def test_search_takes_fts5_syntax_as_plain_words(
    query: str, make_harness: HarnessFactory, security_figures: SecurityFigures
) -> None:
    h = await make_harness()
    await h.agent.new_session(title="unrelated")
    with security_figures.attempt(FTS):
        assert await h.store.search_sessions(query) == []


async def test_search_still_finds_a_quoted_word(make_harness: HarnessFactory) -> None:
    h = await make_harness()
    record = await h.agent.new_session(title='say "hello" there')
    assert [r.id for r in await h.store.search_sessions('"hello"')] == [record.id]


async def test_a_fork_taken_mid_turn_sends_no_dangling_tool_call(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness({"permissions": {"bash": "ask"}})
    api.enqueue(
        reply(text("ok"), tool_use("bash", {"command": "echo hi"})),
        reply(text("done")),
        reply(text("fork answer")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    question = await h.wait_for("permission-request")
    messages = await h.store.load_messages(session.id, repair=False)
    fork = await h.agent.fork_session(session.id, messages[-1].id)  # its bash call is running
    h.agent.approve(question.session_id, question.request_id, "reject")
    await asyncio.wait_for(turn, 10)
    with security_figures.attempt("fork of a session mid-turn"):
        result = await h.agent.prompt(fork.id, "continue")
        assert result.finish_reason == "end_turn" and result.text == "fork answer"
        assert not [r for r in api.all_requests if r.rejected]
