"""Search (FTS5 over message text), delete with everything of a session, and fork at a message,
on a real SQLite file; the fork continued through the Agent against the local Messages API."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentls.history import Message, TextPart, ToolPart, new_id, now_ms
from agentls.store import Store
from agentls.store.session_admin import fts_query
from agentls.store.session_locks import SessionLockedError
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = await Store.open(tmp_path / "agentls.db")
    yield s
    await s.close()


def count(path: Path, sql: str, params: tuple[object, ...] = ()) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(sql, params).fetchone()[0])
    finally:
        conn.close()


def message(session_id: str, role: str, *parts: TextPart | ToolPart) -> Message:
    return Message(
        id=new_id("msg"),
        session_id=session_id,
        role=role,  # type: ignore[arg-type]
        created_at=now_ms(),
        parts=list(parts),
    )


async def test_search_finds_titles_and_message_text_as_it_is_written(store: Store) -> None:
    a = await store.create_session("Fix the parser", "/w", "m")
    b = await store.create_session("Other work", "/w", "m")
    c = await store.create_session("Elsewhere", "/x", "m")
    await store.add_message(message(b.id, "user", TextPart(text="Why does the tokenizer crash?")))
    answer = message(b.id, "assistant", TextPart(text="It does not"))
    await store.add_message(answer)
    await store.add_message(message(c.id, "user", TextPart(text="the tokenizer again")))

    assert [s.id for s in await store.search_sessions("parser")] == [a.id]
    # Words of the text, as words or their start, all of them; any case.
    assert [s.id for s in await store.search_sessions("TOKEN crash")] == [b.id]
    assert {s.id for s in await store.search_sessions("tokenizer")} == {b.id, c.id}
    assert [s.id for s in await store.search_sessions("tokenizer", cwd="/w")] == [b.id]
    assert await store.search_sessions("tokenizer parser") == []
    # A streamed part rewritten in place is searched as it now reads, not as it first did.
    await store.save_part(answer.id, 0, TextPart(text="It overflows the buffer"))
    assert [s.id for s in await store.search_sessions("overflows")] == [b.id]
    assert await store.search_sessions("does not") == []
    # FTS5 syntax in the query is text, not syntax; no words finds nothing.
    assert await store.search_sessions('NEAR( "x') == []
    assert await store.search_sessions("   ") == []
    assert fts_query('a"b c') == '"a""b"* "c"*'
    # Tool output is not message text.
    await store.add_message(
        message(a.id, "assistant", ToolPart(call_id="t1", tool="bash", input={}, output="zebra"))
    )
    assert await store.search_sessions("zebra") == []


async def test_an_existing_database_is_indexed_by_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    s = await Store.open(path)
    session = await s.create_session("t", "/w", "m")
    await s.add_message(message(session.id, "user", TextPart(text="remember the walrus")))
    await s.close()
    conn = sqlite3.connect(path)  # as a database of migration 8 would be: no index yet
    conn.executescript(
        "DROP TRIGGER parts_text_insert; DROP TRIGGER parts_text_delete;"
        " DROP TRIGGER parts_text_update; DROP TABLE message_text;"
        # and none of the later migrations' tables
        " DROP TABLE reverts; DROP TABLE review_pending;"
        " ALTER TABLE sessions DROP COLUMN subagent_usage;"
        " ALTER TABLE sessions DROP COLUMN usage_estimated; PRAGMA user_version = 8;"
    )
    conn.close()
    s = await Store.open(path)
    try:
        assert [r.id for r in await s.search_sessions("walrus")] == [session.id]
    finally:
        await s.close()


async def test_delete_removes_the_session_its_sub_agents_and_everything_of_them(
    store: Store,
) -> None:
    doomed = await store.create_session("d", "/w", "m")
    child = await store.create_session("c", "/w", "m")
    await store.set_parent(child.id, doomed.id, "general")
    kept = await store.create_session("k", "/w", "m")
    for s in (doomed, child, kept):
        await store.add_message(message(s.id, "user", TextPart(text="shared words here")))
        await store.add_grant(s.id, "bash", "git *", "allow")
        await store.add_file_change(s.id, "msg_x", "/w/a.py", None, "x")
    # A turn of the child runs in a live process (this one): nothing is deleted.
    await store.lock_session(child.id, "owner")
    with pytest.raises(SessionLockedError):
        await store.delete_session_tree(doomed.id)
    assert count(store.path, "SELECT COUNT(*) FROM sessions") == 3
    # Its process is gone (a pid no process has): the stale lock goes with the session.
    conn = sqlite3.connect(store.path)
    conn.execute("UPDATE session_locks SET pid = 4194304 + 7")
    conn.commit()
    conn.close()
    assert sorted(await store.delete_session_tree(doomed.id)) == sorted([doomed.id, child.id])
    path = store.path
    for table in ("messages", "permission_grants", "file_changes"):
        assert count(path, f"SELECT COUNT(*) FROM {table} WHERE session_id != ?", (kept.id,)) == 0
    assert count(path, "SELECT COUNT(*) FROM session_locks") == 0
    assert count(path, "SELECT COUNT(*) FROM sessions") == 1
    assert count(path, "SELECT COUNT(*) FROM parts") == 1
    assert count(path, "SELECT COUNT(*) FROM message_text") == 1
    assert [s.id for s in await store.search_sessions("shared")] == [kept.id]
    assert await store.delete_session_tree("ses_unknown") == []


async def test_fork_copies_up_to_the_message_with_parts(store: Store) -> None:
    source = await store.create_session("Work", "/w", "model-a")
    await store.set_mode(source.id, "plan")
    first = message(source.id, "user", TextPart(text="one"))
    second = message(
        source.id,
        "assistant",
        TextPart(text="two"),
        ToolPart(call_id="t1", tool="read", input={"path": "a"}, status="completed", output="A"),
    )
    third = message(source.id, "user", TextPart(text="three"))
    for m in (first, second, third):
        await store.add_message(m)
    fork = await store.fork_session(source.id, second.id)
    assert fork.id != source.id and fork.title == "Fork of Work"
    assert (fork.cwd, fork.model, fork.mode) == ("/w", "model-a", "plan")
    copied = await store.load_messages(fork.id)
    assert [(m.role, m.parts) for m in copied] == [(m.role, m.parts) for m in (first, second)]
    assert all(m.session_id == fork.id for m in copied)
    assert not {m.id for m in copied} & {first.id, second.id}
    # The source is unchanged; the copy's text is searchable as its own.
    assert len(await store.load_messages(source.id)) == 3
    assert {s.id for s in await store.search_sessions("two")} == {source.id, fork.id}
    named = await store.fork_session(source.id, first.id, "Try again")
    assert named.title == "Try again" and len(await store.load_messages(named.id)) == 1
    other = await store.create_session("o", "/w", "m")
    with pytest.raises(KeyError):
        await store.fork_session(other.id, first.id)
    with pytest.raises(KeyError):
        await store.fork_session("ses_unknown", first.id)


async def test_a_fork_continues_through_the_agent_with_a_valid_history(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"permissions": {"*": "allow"}})
    (h.root / "a.txt").write_text("alpha\n")
    api.enqueue(reply(tool_use("read", {"path": "a.txt"}, id="toolu_r")))
    api.enqueue(reply(text("It says alpha.")))
    api.enqueue(reply(text("Later answer.")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "What does a.txt say?")
    await h.agent.prompt(session.id, "And then?")
    history = await h.agent.messages(session.id)
    # Fork at the tool-using answer of the first turn (its result is in its part).
    tool_message = next(m for m in history if m.tool_parts())
    fork = await h.agent.fork_session(session.id, tool_message.id)
    api.enqueue(reply(text("Forked answer.")))
    result = await h.agent.prompt(fork.id, "Continue from here")
    assert result.text == "Forked answer."
    sent = h.accepted_requests()[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][-1]["type"] == "tool_use"
    assert sent[2]["content"][0]["type"] == "tool_result"
    assert "Continue from here" in str(sent[2]["content"])
    assert "And then?" not in str(sent)
    # Rename, search and delete through the Agent.
    assert await h.agent.rename_session(fork.id, "  Branch\n") == "Branch"
    assert [s.title for s in await h.agent.search_sessions("branch", cwd=h.root)] == ["Branch"]
    with pytest.raises(ValueError):
        await h.agent.rename_session(fork.id, "   ")
    assert await h.agent.delete_session(fork.id) == [fork.id]
    with pytest.raises(KeyError):
        await h.agent.messages(fork.id)
    with pytest.raises(KeyError):
        await h.agent.delete_session(fork.id)
