"""Tests of the SQLite store against real database files."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentls.history import (
    ContextPart,
    Message,
    Part,
    Position,
    Range,
    TextPart,
    ThinkingPart,
    ToolPart,
    Usage,
    new_id,
    now_ms,
)
from agentls.store import (
    SCHEMA_VERSION,
    Store,
    StoreError,
    StoreVersionError,
    default_data_dir,
    default_db_path,
    schema,
)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "agentls.db"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[Store]:
    s = await Store.open(db_path)
    yield s
    await s.close()


def raw(path: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Read the file with plain sqlite3, as a different process would."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.execute(sql, params).fetchall())
    finally:
        conn.close()


def user(session_id: str, text: str, id: str | None = None) -> Message:
    return Message(
        id=id or new_id("msg"),
        session_id=session_id,
        role="user",
        created_at=now_ms(),
        parts=[TextPart(text=text)],
    )


def every_part_message(session_id: str) -> Message:
    return Message(
        id=new_id("msg"),
        session_id=session_id,
        role="assistant",
        created_at=now_ms(),
        parts=[
            ThinkingPart(text="let me think", signature="sig=="),
            ThinkingPart(text="cut off"),
            TextPart(text="Reading the file. ünïcödé ✓"),
            TextPart(text="stopped", cancelled=True),
            ToolPart(
                call_id="toolu_1",
                tool="read",
                input={"path": "src/a.py", "range": [1, 20], "opts": {"deep": True, "n": None}},
                status="completed",
                output="line 1\nline 2",
                title="Read src/a.py",
            ),
            ToolPart(
                call_id="toolu_2",
                tool="bash",
                input={"cmd": "false"},
                status="error",
                output="exit 1",
            ),
            ContextPart(
                uri="file:///w/a.py",
                range=Range(start=Position(line=1, character=0), end=Position(line=3, character=4)),
                text="def f():\n    pass",
            ),
            ContextPart(uri="file:///w/b.py"),
        ],
        finish_reason="tool_use",
        usage=Usage(
            input_tokens=10,
            output_tokens=20,
            cache_read_tokens=3,
            cache_write_tokens=4,
            cost_usd=0.0123,
        ),
        error="overloaded, retried",
    )


# Opening, pragmas, migrations


async def test_open_creates_dirs_sets_wal_and_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "agentls.db"
    store = await Store.open(path)
    await store.close()
    assert path.exists()
    assert raw(path, "PRAGMA journal_mode") == [("wal",)]
    assert raw(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    tables = {row[0] for row in raw(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "messages", "parts", "permission_grants"} <= tables
    # Reopening an up-to-date database is a no-op migration-wise.
    store = await Store.open(path)
    await store.close()
    assert raw(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]


async def test_database_from_a_newer_version_is_refused(db_path: Path) -> None:
    store = await Store.open(db_path)
    await store.close()
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreVersionError, match="newer"):
        await Store.open(db_path)


async def test_migrations_apply_in_order_and_atomically(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await Store.open(db_path)
    await store.close()
    original = schema.MIGRATIONS

    # A failing migration leaves neither its tables nor a bumped version behind.
    broken = (*original, ("CREATE TABLE extra (x INTEGER)", "NOT VALID SQL"))
    monkeypatch.setattr(schema, "MIGRATIONS", broken)
    with pytest.raises(StoreError, match="syntax error") as failed:
        await Store.open(db_path)
    assert isinstance(failed.value.__cause__, sqlite3.OperationalError)
    assert raw(db_path, "PRAGMA user_version") == [(len(original),)]
    assert raw(db_path, "SELECT name FROM sqlite_master WHERE name = 'extra'") == []

    good = (
        *original,
        ("CREATE TABLE extra (x INTEGER)",),
        ("INSERT INTO extra (x) SELECT COUNT(*) FROM sqlite_master WHERE name = 'extra'",),
    )
    monkeypatch.setattr(schema, "MIGRATIONS", good)
    store = await Store.open(db_path)
    await store.close()
    assert raw(db_path, "PRAGMA user_version") == [(len(good),)]
    assert raw(db_path, "SELECT x FROM extra") == [(1,)]


async def test_a_database_with_packed_runs_loses_them_and_loads_from_its_rows(
    db_path: Path,
) -> None:
    """Migration 6 drops the retired packed runs (table and triggers) of a version-5 database;
    its sessions load from their rows, and changing them no longer touches the dropped table."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path)
    for migration in schema.MIGRATIONS[:5]:
        for statement in migration:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 5")
    conn.execute(
        "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at)"
        " VALUES ('ses_old', 't', '/w', 'm', 0, 0)"
    )
    conn.execute(
        "INSERT INTO messages (id, session_id, seq, role, created_at) VALUES"
        " ('msg_old', 'ses_old', 1, 'user', 1)"
    )
    conn.execute(
        "INSERT INTO parts (message_id, idx, type, data) VALUES"
        """ ('msg_old', 0, 'text', '{"type": "text", "text": "hello"}')"""
    )
    conn.execute(
        "INSERT INTO packed_messages (session_id, first_seq, last_seq, count, data)"
        " VALUES ('ses_old', 1, 1, 1, x'00')"
    )
    conn.commit()
    conn.close()

    async with await Store.open(db_path) as store:
        (loaded,) = await store.load_messages("ses_old")
        assert loaded.parts == [TextPart(text="hello")]
        await store.save_part("msg_old", 1, TextPart(text="more"))
        await store.add_message(user("ses_old", "next"))
    assert raw(db_path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert raw(db_path, "SELECT name FROM sqlite_master WHERE name LIKE '%pack%'") == []


def test_default_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "explicit"
    assert default_db_path() == tmp_path / "explicit" / "agentls.db"
    monkeypatch.delenv("AGENTLS_DATA_DIR")
    assert default_data_dir() == tmp_path / "xdg" / "agentls"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_data_dir() == tmp_path / "home" / ".local" / "share" / "agentls"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_data_dir() == tmp_path / "home" / ".local" / "share" / "agentls"


# Messages and parts


async def test_every_part_type_round_trips_across_reopen(db_path: Path) -> None:
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "claude")
    first = user(session.id, "hello")
    first.parts.append(ContextPart(uri="file:///w/c.py", text="x = 1"))
    second = every_part_message(session.id)
    second.reverted = True
    await store.add_message(first)
    await store.add_message(second)
    await store.close()

    store = await Store.open(db_path)
    loaded = await store.load_messages(session.id)
    await store.close()
    assert loaded == [first, second]
    assert isinstance(loaded[1].parts[4], ToolPart)
    assert loaded[1].parts[4].input["opts"] == {"deep": True, "n": None}
    assert loaded[1].usage == Usage(
        input_tokens=10,
        output_tokens=20,
        cache_read_tokens=3,
        cache_write_tokens=4,
        cost_usd=0.0123,
    )


async def test_messages_load_in_insertion_order(store: Store) -> None:
    session = await store.create_session("t", "/w", "m")
    other = await store.create_session("o", "/w", "m")
    # Ids deliberately sort against the insertion order: seq, not id, decides.
    ids = [f"msg_{chr(ord('z') - i)}" for i in range(20)]
    for i, message_id in enumerate(ids):
        await store.add_message(user(session.id, f"m{i}", id=message_id))
        await store.add_message(user(other.id, f"other {i}"))
    loaded = await store.load_messages(session.id)
    assert [m.id for m in loaded] == ids
    assert [m.text() for m in loaded] == [f"m{i}" for i in range(20)]
    assert [m.session_id for m in loaded] == [session.id] * 20

    since = await store.load_messages(session.id, since_message_id=ids[15])
    assert [m.id for m in since] == ids[15:]
    with pytest.raises(KeyError):
        await store.load_messages(other.id, since_message_id=ids[0])
    assert await store.load_messages("ses_unknown") == []


async def test_save_part_updates_tool_status_and_appends(store: Store) -> None:
    session = await store.create_session("t", "/w", "m")
    tool = ToolPart(call_id="c1", tool="bash", input={"cmd": "ls"})
    message = Message(
        id=new_id("msg"),
        session_id=session.id,
        role="assistant",
        created_at=now_ms(),
        parts=[TextPart(text="Run"), tool],
    )
    await store.add_message(message)

    tool.status = "running"
    await store.save_part(message.id, 1, tool)
    [loaded] = await store.load_messages(session.id, repair=False)
    assert loaded.tool_parts()[0].status == "running"

    tool.status, tool.output, tool.title = "completed", "a.py\nb.py", "ls"
    await store.save_part(message.id, 1, tool)
    # A text block that finished after the tool call started goes at the next index.
    await store.save_part(message.id, 2, TextPart(text="Two files."))
    [loaded] = await store.load_messages(session.id)
    assert loaded.parts == [
        TextPart(text="Run"),
        ToolPart(
            call_id="c1",
            tool="bash",
            input={"cmd": "ls"},
            status="completed",
            output="a.py\nb.py",
            title="ls",
        ),
        TextPart(text="Two files."),
    ]
    # A part may even change type at an index (e.g. a placeholder replaced).
    await store.save_part(message.id, 0, ThinkingPart(text="hm", signature="s"))
    [loaded] = await store.load_messages(session.id)
    assert loaded.parts[0] == ThinkingPart(text="hm", signature="s")
    assert raw(store.path, "SELECT type FROM parts WHERE idx = 0") == [("thinking",)]


async def test_clear_and_replace_parts(store: Store) -> None:
    session = await store.create_session("t", "/w", "m")
    message = every_part_message(session.id)
    await store.add_message(message)
    await store.clear_parts(message.id)
    [loaded] = await store.load_messages(session.id)
    assert loaded.parts == [] and loaded.usage == message.usage

    await store.add_message(every_part_message(session.id))
    replacement: list[Part] = [
        TextPart(text="kept", cancelled=True),
        ToolPart(call_id="x", tool="t", input={}, status="cancelled"),
    ]
    await store.replace_parts(message.id, replacement)
    loaded, other = await store.load_messages(session.id)
    assert loaded.parts == replacement
    assert len(other.parts) == 8


async def test_update_message(store: Store) -> None:
    session = await store.create_session("t", "/w", "m")
    message = Message(
        id=new_id("msg"), session_id=session.id, role="assistant", created_at=now_ms()
    )
    await store.add_message(message)
    message.finish_reason = "max_tokens"
    message.usage = Usage(input_tokens=1, output_tokens=2, cost_usd=0.5)
    message.error = "boom"
    message.reverted = True
    await store.update_message(message)
    assert await store.load_messages(session.id) == [message]
    message.usage, message.error, message.reverted = None, None, False
    await store.update_message(message)
    assert await store.load_messages(session.id) == [message]


async def test_interrupted_repair_is_persisted(db_path: Path) -> None:
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "m")
    message = Message(
        id=new_id("msg"),
        session_id=session.id,
        role="assistant",
        created_at=now_ms(),
        parts=[
            ToolPart(call_id="a", tool="read", input={}, status="completed", output="ok"),
            ToolPart(call_id="b", tool="bash", input={}, status="pending"),
            TextPart(text="between"),
            ToolPart(call_id="c", tool="edit", input={}, status="running"),
        ],
    )
    await store.add_message(message)
    # repair=False (a live turn) leaves unfinished calls alone, in memory and on disk.
    live = await store.load_messages(session.id, repair=False)
    assert [p.status for p in live[0].tool_parts()] == ["completed", "pending", "running"]

    repaired = await store.load_messages(session.id)
    assert [p.status for p in repaired[0].tool_parts()] == [
        "completed",
        "interrupted",
        "interrupted",
    ]
    await store.close()

    statuses = raw(db_path, "SELECT idx, json_extract(data, '$.status') FROM parts ORDER BY idx")
    assert statuses == [(0, "completed"), (1, "interrupted"), (2, None), (3, "interrupted")]
    store = await Store.open(db_path)
    reloaded = await store.load_messages(session.id, repair=False)
    await store.close()
    assert reloaded == repaired
    assert reloaded[0].tool_parts()[1].output is not None


_CRASH_SCRIPT = textwrap.dedent(
    """
    import asyncio, os, sys
    from agentls.history import Message, TextPart, ToolPart, now_ms
    from agentls.store import Store

    async def main() -> None:
        store = await Store.open(sys.argv[1])
        session = await store.create_session("crash", "/w", "m", id="ses_crash")
        await store.add_message(Message(id="msg_user", session_id=session.id, role="user",
                                        created_at=now_ms(), parts=[TextPart(text="go")]))
        tool = ToolPart(call_id="c1", tool="bash", input={"cmd": "sleep 100"})
        await store.add_message(Message(id="msg_asst", session_id=session.id, role="assistant",
                                        created_at=now_ms(), parts=[TextPart(text="ok"), tool]))
        tool.status = "running"
        await store.save_part("msg_asst", 1, tool)
        if sys.argv[2] == "exit":
            os._exit(0)
        print("ready", flush=True)
        # Keep committing multi-part messages so that the SIGKILL lands in the middle of writes,
        # and report each commit: every reported one must survive.
        i = 0
        while True:
            i += 1
            await store.add_message(Message(
                id=f"msg_{i:07d}", session_id=session.id, role="assistant", created_at=now_ms(),
                parts=[TextPart(text="x" * 3000), ToolPart(call_id=f"k{i}", tool="bash", input={}),
                       TextPart(text="y")]))
            print(i, flush=True)

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("how", ["exit", "kill"])
async def test_crash_loses_no_committed_write(db_path: Path, how: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CRASH_SCRIPT, str(db_path), how, stdout=asyncio.subprocess.PIPE
    )
    assert proc.stdout is not None
    reported = 0
    if how == "kill":
        assert await asyncio.wait_for(proc.stdout.readline(), 20) == b"ready\n"
        await asyncio.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        lines = (await asyncio.wait_for(proc.stdout.read(), 20)).split()
        reported = int(lines[-1]) if lines else 0
    returncode = await asyncio.wait_for(proc.wait(), 20)
    assert returncode == (-signal.SIGKILL if how == "kill" else 0)

    # The -wal file is still there, uncheckpointed: opening recovers from it.
    assert raw(db_path, "PRAGMA integrity_check") == [("ok",)]
    store = await Store.open(db_path)
    messages = await store.load_messages("ses_crash")
    await store.close()
    assert [m.id for m in messages[:2]] == ["msg_user", "msg_asst"]
    assert messages[0].text() == "go"
    assert messages[1].parts[0] == TextPart(text="ok")
    assert messages[1].tool_parts()[0].status == "interrupted"
    rest = messages[2:]
    if how == "kill":
        assert reported > 0, "the child should have committed some messages before the kill"
    # Every commit the child reported is there (and at most the one in flight beyond it).
    assert reported <= len(rest) <= reported + 1
    # Every message is whole (all three parts or none) and the seq order has no holes.
    assert [m.id for m in rest] == [f"msg_{i:07d}" for i in range(1, len(rest) + 1)]
    assert all(len(m.parts) == 3 and m.tool_parts()[0].status == "interrupted" for m in rest)
    seqs = [row[0] for row in raw(db_path, "SELECT seq FROM messages ORDER BY seq")]
    assert seqs == list(range(1, len(messages) + 1))


# Sessions


async def test_session_crud_and_usage_totals(store: Store) -> None:
    session = await store.create_session("first", "/w", "claude-a", id="ses_fixed")
    assert session.id == "ses_fixed"
    assert session.usage == Usage()
    assert await store.get_session("ses_fixed") == session
    assert await store.get_session("ses_nope") is None

    await store.add_session_usage(
        session.id, Usage(input_tokens=100, output_tokens=10, cost_usd=0.1)
    )
    await store.add_session_usage(
        session.id, Usage(input_tokens=5, cache_read_tokens=7, cache_write_tokens=9, cost_usd=0.2)
    )
    await store.update_session(session.id, title="renamed", model="claude-b")
    await store.update_session(session.id, summary_message_id="msg_summary")
    got = await store.get_session(session.id)
    assert got is not None
    assert got.usage == Usage(
        input_tokens=105, output_tokens=10, cache_read_tokens=7, cache_write_tokens=9, cost_usd=0.3
    )
    assert (got.title, got.model, got.cwd, got.summary_message_id) == (
        "renamed",
        "claude-b",
        "/w",
        "msg_summary",
    )
    assert got.created_at == session.created_at
    assert got.updated_at >= session.updated_at
    assert got.wire()["summaryMessageId"] == "msg_summary"


async def test_list_sessions_order_filter_and_limit(store: Store) -> None:
    a = await store.create_session("a", "/one", "m")
    await asyncio.sleep(0.003)
    b = await store.create_session("b", "/two", "m")
    await asyncio.sleep(0.003)
    c = await store.create_session("c", "/one", "m")
    assert [s.id for s in await store.list_sessions()] == [c.id, b.id, a.id]
    await asyncio.sleep(0.003)
    await store.add_message(user(a.id, "activity moves a session up"))
    assert [s.id for s in await store.list_sessions()] == [a.id, c.id, b.id]
    await asyncio.sleep(0.003)
    await store.add_session_usage(b.id, Usage(output_tokens=1))
    assert [s.id for s in await store.list_sessions()] == [b.id, a.id, c.id]
    assert [s.id for s in await store.list_sessions(cwd="/one")] == [a.id, c.id]
    assert [s.id for s in await store.list_sessions(limit=1)] == [b.id]
    assert await store.list_sessions(cwd="/none") == []

    await asyncio.gather(*(store.create_session(f"s{i}", f"/p{i % 7}", "m") for i in range(1000)))
    listed = await store.list_sessions()
    assert len(listed) == 1000
    assert [s.updated_at for s in listed] == sorted((s.updated_at for s in listed), reverse=True)


async def test_delete_session_cascades(store: Store) -> None:
    doomed = await store.create_session("d", "/w", "m")
    kept = await store.create_session("k", "/w", "m")
    for session in (doomed, kept):
        await store.add_message(every_part_message(session.id))
        await store.add_grant(session.id, "bash", "git *", "allow")
    await store.update_session(doomed.id, summary_message_id="msg_x")
    await store.delete_session(doomed.id)
    assert await store.get_session(doomed.id) is None
    assert await store.load_messages(doomed.id) == []
    assert await store.list_grants(doomed.id) == []
    assert len(await store.load_messages(kept.id)) == 1
    assert raw(store.path, "SELECT COUNT(*) FROM parts") == [(8,)]
    assert raw(store.path, "SELECT COUNT(*) FROM permission_grants") == [(1,)]


async def test_grants_round_trip(db_path: Path) -> None:
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "m")
    other = await store.create_session("o", "/w", "m")
    await store.add_grant(session.id, "bash", "npm test*", "allow")
    await store.add_grant(session.id, "edit", None, "allow")
    await store.add_grant(session.id, "bash", "rm *", "deny")
    await store.add_grant(session.id, "edit", None, "allow")  # a duplicate is kept once
    await store.add_grant(other.id, "read", None, "allow")
    await store.close()
    store = await Store.open(db_path)
    assert await store.list_grants(session.id) == [
        ("bash", "npm test*", "allow", False),
        ("edit", None, "allow", False),
        ("bash", "rm *", "deny", False),
    ]
    assert await store.list_grants(other.id) == [("read", None, "allow", False)]
    await store.close()


# Integrity under concurrency and failure


async def test_concurrent_writes_do_not_interleave(store: Store) -> None:
    session = await store.create_session("t", "/w", "m")

    async def writer(task: int) -> None:
        for i in range(15):
            tool = ToolPart(call_id=f"c{task}_{i}", tool="bash", input={"i": i})
            message = Message(
                id=f"msg_{task:02d}_{i:02d}",
                session_id=session.id,
                role="assistant",
                created_at=now_ms(),
                parts=[TextPart(text=f"{task}/{i}"), tool, TextPart(text="end")],
            )
            await store.add_message(message)
            tool.status, tool.output = "completed", f"out {task}/{i}"
            await store.save_part(message.id, 1, tool)
            await store.add_session_usage(session.id, Usage(input_tokens=1, cost_usd=0.001))
            if i % 5 == 0:
                await store.add_grant(session.id, "bash", f"p{task}", "allow")
                await store.list_sessions()

    await asyncio.gather(*(writer(t) for t in range(20)))
    messages = await store.load_messages(session.id)
    assert len(messages) == 300
    for m in messages:
        task, i = (int(x) for x in m.id.split("_")[1:])
        assert m.text() == f"{task}/{i}end"
        assert m.tool_parts()[0].status == "completed"
        assert m.tool_parts()[0].output == f"out {task}/{i}"
    # Each task's messages keep that task's order.
    for t in range(20):
        assert [m.id for m in messages if m.id.startswith(f"msg_{t:02d}_")] == sorted(
            m.id for m in messages if m.id.startswith(f"msg_{t:02d}_")
        )
    got = await store.get_session(session.id)
    assert got is not None and got.usage.input_tokens == 300
    assert got.usage.cost_usd == pytest.approx(0.3)
    assert len(await store.list_grants(session.id)) == 20
    assert raw(store.path, "SELECT COUNT(DISTINCT seq), MIN(seq), MAX(seq) FROM messages") == [
        (300, 1, 300)
    ]
    assert raw(store.path, "PRAGMA integrity_check") == [("ok",)]


async def test_cancelled_writes_leave_no_transaction_open(store: Store) -> None:
    session = await store.create_session("t", "/w", "m")
    # Cancel the caller after 0, 1, 2, ... loop iterations, so that cancels land before, in
    # and after each statement of the transaction.
    for ticks in range(60):
        task = asyncio.create_task(store.add_message(every_part_message(session.id)))
        for _ in range(ticks):
            await asyncio.sleep(0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await store.add_message(user(session.id, f"after {ticks}"))
    messages = await store.load_messages(session.id)
    # Shielded transactions run to the end: a cancelled caller's message is whole, never partial.
    assert all(len(m.parts) == 8 for m in messages if m.role == "assistant")
    assert [m.text() for m in messages if m.role == "user"] == [f"after {t}" for t in range(60)]
    assert raw(store.path, "PRAGMA integrity_check") == [("ok",)]


async def test_failed_write_rolls_back_whole(store: Store) -> None:
    session = await store.create_session("t", "/w", "m")
    orphan = every_part_message("ses_missing")
    with pytest.raises(sqlite3.IntegrityError):
        await store.add_message(orphan)
    duplicate = every_part_message(session.id)
    await store.add_message(duplicate)
    duplicate.parts.append(TextPart(text="extra"))
    with pytest.raises(sqlite3.IntegrityError):
        await store.add_message(duplicate)
    await store.add_message(user(session.id, "still works"))
    messages = await store.load_messages(session.id)
    assert [len(m.parts) for m in messages] == [8, 1]
    assert raw(store.path, "SELECT COUNT(*) FROM parts WHERE message_id = ?", (orphan.id,)) == [
        (0,)
    ]
    assert raw(store.path, "SELECT COUNT(*) FROM parts") == [(9,)]


async def test_closed_store_refuses_work(db_path: Path) -> None:
    async with await Store.open(db_path) as store:
        await store.create_session("t", "/w", "m")
    await store.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        await store.list_sessions()


async def test_a_5000_message_session_written_by_another_process_loads_whole(db_path: Path) -> None:
    store = await Store.open(db_path)
    session = await store.create_session("big", "/w", "m")
    await store.close()
    # Bulk-insert with plain sqlite3 in one transaction: 5,000 add_message commits would
    # dominate the test's run time, and this test is about reading.
    conn = sqlite3.connect(db_path)
    with conn:
        for i in range(5000):
            message = Message(
                id=f"msg_{i:05d}",
                session_id=session.id,
                role="assistant" if i % 2 else "user",
                created_at=i,
                parts=[
                    TextPart(text=f"message {i} " + "lorem ipsum " * 20),
                    ToolPart(
                        call_id=f"c{i}",
                        tool="read",
                        input={"path": f"f{i}.py"},
                        status="completed",
                        output="x" * 200,
                    ),
                ]
                if i % 2
                else [TextPart(text=f"question {i}")],
                usage=Usage(input_tokens=i) if i % 2 else None,
                finish_reason="tool_use" if i % 2 else None,
            )
            conn.execute(
                "INSERT INTO messages (id, session_id, seq, role, created_at, finish_reason, usage)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    message.id,
                    session.id,
                    i + 1,
                    message.role,
                    message.created_at,
                    message.finish_reason,
                    message.usage.model_dump_json() if message.usage else None,
                ),
            )
            conn.executemany(
                "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)",
                [(message.id, j, p.type, p.model_dump_json()) for j, p in enumerate(message.parts)],
            )
    conn.close()

    store = await Store.open(db_path)
    messages = await store.load_messages(session.id)
    await store.close()
    assert len(messages) == 5000
    assert messages[4999].tool_parts()[0].input == {"path": "f4999.py"}
    assert messages[4999].usage == Usage(input_tokens=4999)
