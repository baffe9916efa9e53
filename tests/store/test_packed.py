"""Packed runs of history (store/packed.py): a session read through them equals the session read
from its rows, every change to a packed message drops its run (whichever connection makes it),
and a run that cannot be unpacked costs nothing but time."""

from __future__ import annotations

import logging
import marshal
import random
import sqlite3
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from agentls.history import Message, SummaryPart, TextPart, ToolPart, Usage, new_id
from agentls.store import Store
from agentls.store import packed as packed_module
from tests.store.test_load import varied_message


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "agentls.db"


def runs(db_path: Path, session_id: str) -> list[tuple[int, int, int]]:
    conn = sqlite3.connect(db_path)
    try:
        return list(
            conn.execute(
                "SELECT first_seq, last_seq, count FROM packed_messages WHERE session_id = ?"
                " ORDER BY first_seq",
                (session_id,),
            )
        )
    finally:
        conn.close()


def sql(db_path: Path, statement: str, params: tuple[object, ...] = ()) -> None:
    """A write through another connection, as another process would make it."""
    conn = sqlite3.connect(db_path)
    try:
        with conn:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute(statement, params)
    finally:
        conn.close()


async def from_rows(db_path: Path, session_id: str, since: str | None = None) -> list[Message]:
    """The session as its rows hold it (on a copy of the database without its packed runs)."""
    copy = db_path.with_name("rows.db")
    copy.unlink(missing_ok=True)
    source = sqlite3.connect(db_path)
    target = sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.execute("DELETE FROM packed_messages")
    target.commit()
    target.close()
    store = await Store.open(copy)
    try:
        return await store.load_messages(session_id, since_message_id=since)
    finally:
        await store.close()


async def written_session(db_path: Path, count: int, seed: int = 3) -> tuple[str, list[Message]]:
    rng = random.Random(seed)
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "m")
    other = await store.create_session("o", "/w", "m")
    written = [varied_message(rng, session.id, n) for n in range(count)]
    for n, message in enumerate(written):
        await store.add_message(message)
        if n % 40 == 0:
            await store.add_message(varied_message(rng, other.id, n))
    await store.close()
    return session.id, written


async def pack_all(db_path: Path, session_id: str, min_messages: int, max_messages: int) -> int:
    store = await Store.open(db_path)
    total = 0
    try:
        while packed := await store.pack_messages(
            session_id, min_messages=min_messages, max_messages=max_messages
        ):
            total += packed
    finally:
        await store.close()
    return total


async def load(db_path: Path, session_id: str, since: str | None = None) -> list[Message]:
    store = await Store.open(db_path)
    try:
        return await store.load_messages(session_id, since_message_id=since)
    finally:
        await store.close()


async def test_a_session_read_through_packed_runs_equals_the_session_written(
    db_path: Path,
) -> None:
    session_id, written = await written_session(db_path, 530)
    # Runs of 100 (the last 30 too few to pack: read from their rows).
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=100) == 500
    assert [
        (first, last - first + 1, count) for first, last, count in runs(db_path, session_id)
    ] == [(1 + 100 * k, 100, 100) for k in range(5)]

    loaded = await load(db_path, session_id)
    assert loaded == written
    for got, wrote in zip(loaded, written, strict=True):
        # Made without validation, but the same models in every respect that matters.
        assert type(got) is Message
        assert [type(p) for p in got.parts] == [type(p) for p in wrote.parts]
        assert got.model_dump() == wrote.model_dump()
        assert got.wire() == wrote.wire()
        assert got.model_fields_set == set(Message.model_fields)
        for part in got.parts:
            assert part.model_fields_set == set(type(part).model_fields)
    # From a message inside a run, at a run's first, and among the rows after the runs.
    for since in (0, 150, 200, 517):
        assert await load(db_path, session_id, written[since].id) == written[since:]
    with pytest.raises(KeyError):
        await load(db_path, session_id, "msg_not_there")

    # And they behave as the models they are: assignment, copies, JSON.
    message = loaded[3]
    message.reverted = True
    assert message.model_copy().reverted is True
    assert Message.model_validate_json(message.model_dump_json()) == message
    part = next(p for m in loaded for p in m.parts if isinstance(p, ToolPart))
    part.status = "error"
    assert part.model_dump()["status"] == "error"
    assert part.model_fields_set == set(ToolPart.model_fields)
    # Every other tool part is untouched by that assignment (no shared state but the field set).
    assert sum(p.status == "error" for m in loaded for p in m.tool_parts()) == 1 + sum(
        p.status == "error" for m in written for p in m.tool_parts()
    )


def _summary(session_id: str) -> Message:
    return Message(
        id=new_id("msg"),
        session_id=session_id,
        role="user",
        created_at=5,
        parts=[SummaryPart(text="the story so far", summarized_messages=70)],
    )


# Each change, made to message number 150 (in the second run of 100) of the session.
CHANGES: dict[str, Callable[[Store, Path, str, list[Message]], Awaitable[None]]] = {
    "a part appended": lambda s, db, sid, w: s.save_part(w[150].id, 9, TextPart(text="new")),
    "a part replaced": lambda s, db, sid, w: s.save_part(w[150].id, 0, TextPart(text="changed")),
    "the parts cleared": lambda s, db, sid, w: s.clear_parts(w[150].id),
    "the parts replaced": lambda s, db, sid, w: s.replace_parts(w[150].id, [TextPart(text="only")]),
    "the message updated": lambda s, db, sid, w: s.update_message(
        w[150].model_copy(update={"reverted": True, "usage": Usage(output_tokens=9)})
    ),
    "a summary inserted before it": lambda s, db, sid, w: s.add_summary(_summary(sid), w[150].id),
    # Another process writing its row directly.
    "its part rewritten by another connection": lambda s, db, sid, w: _async(
        sql,
        db,
        "UPDATE parts SET data = json_set(data, '$.text', 'elsewhere') WHERE message_id = ?"
        " AND type = 'text'",
        (w[150].id,),
    ),
    "its flag set by another connection": lambda s, db, sid, w: _async(
        sql, db, "UPDATE messages SET reverted = 1 WHERE id = ?", (w[150].id,)
    ),
}


async def _async(function: Callable[..., None], *args: object) -> None:
    function(*args)


@pytest.mark.parametrize("change", list(CHANGES))
async def test_every_change_to_a_packed_message_drops_its_run(db_path: Path, change: str) -> None:
    session_id, written = await written_session(db_path, 400)
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=100) == 400
    store = await Store.open(db_path)
    await CHANGES[change](store, db_path, session_id, written)
    await store.close()

    truth = await from_rows(db_path, session_id)
    assert truth != written  # the change is one the load must show
    assert await load(db_path, session_id) == truth
    left = [first for first, _, _ in runs(db_path, session_id)]
    if change == "a summary inserted before it":
        # Every later message moved up one seq: the runs from the changed one on all go.
        assert left == [1]
    else:
        assert left == [1, 201, 301]  # the run holding message 150 (seq 151) went, alone

    # Packing again packs the stretch the dropped run left (and what moved after it); after a
    # compaction, from its summary on (a load reads nothing before it).
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=1000) > 0
    again = [first for first, _, _ in runs(db_path, session_id)]
    assert again == ([151] if change == "a summary inserted before it" else [1, 101])
    assert await load(db_path, session_id) == truth


async def test_a_message_added_after_the_runs_leaves_them(db_path: Path) -> None:
    session_id, written = await written_session(db_path, 120)
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=100) == 100
    store = await Store.open(db_path)
    extra = varied_message(random.Random(1), session_id, 999)
    await store.add_message(extra)
    await store.close()
    assert runs(db_path, session_id) == [(1, 100, 100)]
    assert await load(db_path, session_id) == [*written, extra]


def _run(packed_format: str, body: bytes) -> bytes:
    return marshal.dumps((packed_format, zlib.crc32(body), body), 4)


def _damaged(data: bytes) -> bytes:
    packed_format, checksum, body = marshal.loads(data)
    middle = len(body) // 2
    return marshal.dumps(
        (packed_format, checksum, body[:middle] + bytes([body[middle] ^ 1]) + body[middle + 1 :]),
        4,
    )


RUINS: dict[str, Callable[[bytes], bytes]] = {
    "garbage": lambda data: b"\x00not marshal at all",
    "another format": lambda data: _run("agentls-packed/0/another", marshal.loads(data)[2]),
    "one bit flipped": _damaged,
    # Whole and of this format, but not the 100 messages its row says.
    "fewer messages": lambda data: _run(packed_module.FORMAT, marshal.dumps([], 4)),
    "out of order": lambda data: _run(
        packed_module.FORMAT, marshal.dumps(marshal.loads(marshal.loads(data)[2])[::-1], 4)
    ),
    "a part of no known type": lambda data: _run(
        packed_module.FORMAT,
        marshal.dumps(
            [(*row[:8], [{"type": "unknown"}]) for row in marshal.loads(marshal.loads(data)[2])],
            4,
        ),
    ),
}


@pytest.mark.parametrize("ruin", list(RUINS))
async def test_a_run_that_cannot_be_unpacked_is_dropped_and_the_rows_read(
    db_path: Path, ruin: str, caplog: pytest.LogCaptureFixture
) -> None:
    session_id, written = await written_session(db_path, 250)
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=100) == 250
    conn = sqlite3.connect(db_path)
    (data,) = conn.execute("SELECT data FROM packed_messages WHERE first_seq = 101").fetchone()
    conn.close()
    sql(db_path, "UPDATE packed_messages SET data = ? WHERE first_seq = 101", (RUINS[ruin](data),))
    with caplog.at_level(logging.WARNING, logger="agentls.store.db"):
        assert await load(db_path, session_id) == written
    assert "reading its messages from their rows" in caplog.text
    assert runs(db_path, session_id) == []  # all of the session's runs: packed again later
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=100) == 250
    assert await load(db_path, session_id) == written


async def test_packing_stops_before_a_message_holding_an_unfinished_tool_call(
    db_path: Path,
) -> None:
    session_id, written = await written_session(db_path, 150)
    store = await Store.open(db_path)
    running = ToolPart(call_id="toolu_live", tool="bash", input={"command": "make"})
    await store.save_part(written[90].id, 7, running)
    # Fewer than the minimum before it: nothing.
    assert await store.pack_messages(session_id, min_messages=100) == 0
    assert await store.pack_messages(session_id, min_messages=50) == 90
    assert runs(db_path, session_id) == [(1, 90, 90)]
    # The load repairs the call (marks it interrupted, on disk), as it would without runs.
    loaded = await store.load_messages(session_id)
    await store.close()
    repaired = loaded[90].parts[-1]
    assert isinstance(repaired, ToolPart) and repaired.call_id == "toolu_live"
    assert repaired.status == "interrupted"
    assert loaded == await from_rows(db_path, session_id)


async def test_runs_go_with_their_session(db_path: Path) -> None:
    session_id, _ = await written_session(db_path, 100)
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=100) == 100
    store = await Store.open(db_path)
    await store.delete_session(session_id)
    await store.close()
    assert runs(db_path, session_id) == []


def test_the_packed_format_names_every_field_and_context_parts_go_as_json() -> None:
    # A field added to a model changes the format: older runs are dropped, not misread.
    for name in ("Message:", "Usage:", "ToolPart:type,call_id,tool,input,status,output,title"):
        assert name in packed_module.FORMAT
    # A part holding a model (a context part's Range) cannot be marshalled: it goes as JSON.
    assert set(packed_module.PLAIN_PARTS) == {"text", "thinking", "tool", "summary"}


async def test_after_a_compaction_only_what_loads_is_packed_and_no_run_straddles_the_summary(
    db_path: Path,
) -> None:
    session_id, written = await written_session(db_path, 500)
    store = await Store.open(db_path)
    assert await store.pack_messages(session_id, min_messages=40, max_messages=400) == 400
    await store.close()
    assert runs(db_path, session_id) == [(1, 400, 400)]
    # The compaction keeps messages 430 on: its summary goes before them (seq 431).
    store = await Store.open(db_path)
    summary = _summary(session_id)
    await store.add_summary(summary, written[430].id)
    await store.update_session(session_id, summary_message_id=summary.id)
    await store.close()
    assert runs(db_path, session_id) == [(1, 400, 400)]  # all before the summary: untouched
    # Packing starts at the summary: nothing before it (no load reads it) is packed, and the run
    # there goes.
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=400) == 71
    assert runs(db_path, session_id) == [(431, 501, 71)]
    loaded = await load(db_path, session_id, summary.id)
    assert loaded == [summary, *written[430:]]
    assert loaded == await from_rows(db_path, session_id, summary.id)


async def test_a_summary_appended_at_the_end_drops_the_runs_before_it_at_the_next_packing(
    db_path: Path,
) -> None:
    session_id, written = await written_session(db_path, 300)
    assert await pack_all(db_path, session_id, min_messages=40, max_messages=300) == 300
    store = await Store.open(db_path)
    summary = Message(
        id=new_id("msg"),
        session_id=session_id,
        role="user",
        created_at=5,
        parts=[SummaryPart(text="so far", summarized_messages=100)],
    )
    # Written by another process (as a compaction of an older agentls would leave it): a
    # summary at the end, the session starting there; the run before it stays.
    await store.add_summary(summary, None)
    await store.update_session(session_id, summary_message_id=summary.id)
    for n in range(60):
        await store.add_message(varied_message(random.Random(n), session_id, 1000 + n))
    assert runs(db_path, session_id) == [(1, 300, 300)]
    assert await store.pack_messages(session_id, min_messages=40) == 61
    await store.close()
    assert runs(db_path, session_id) == [(301, 361, 61)]
    loaded = await load(db_path, session_id, summary.id)
    assert loaded[0] == summary and len(loaded) == 61
    assert loaded == await from_rows(db_path, session_id, summary.id)


async def test_a_bad_run_is_read_from_the_rows_even_when_it_cannot_be_dropped(
    db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session_id, written = await written_session(db_path, 120)
    assert await pack_all(db_path, session_id, min_messages=10, max_messages=100) == 120
    sql(db_path, "UPDATE packed_messages SET data = x'00' WHERE first_seq = 1")
    store = await Store.open(db_path)
    await store._conn.execute("PRAGMA busy_timeout = 50")
    # Another process holds the write lock all along.
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with caplog.at_level(logging.WARNING, logger="agentls.store.db"):
            assert await store.load_messages(session_id) == written
    finally:
        other.execute("ROLLBACK")
        other.close()
        await store.close()
    assert "could not be dropped" in caplog.text
    assert len(runs(db_path, session_id)) == 2
