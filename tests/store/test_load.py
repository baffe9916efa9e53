"""Loading a session: what comes back equals what was written, however it is built, and a
corrupt row still fails loudly, naming where it is."""

from __future__ import annotations

import gc
import random
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentls.history import (
    ContextPart,
    Message,
    Part,
    Position,
    Range,
    SummaryPart,
    TextPart,
    ThinkingPart,
    ToolPart,
    Usage,
    new_id,
)
from agentls.session.heap import collector_paused
from agentls.store import Store
from agentls.store import rows as store_rows


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "agentls.db"


def varied_message(rng: random.Random, session_id: str, n: int) -> Message:
    role = "user" if n % 3 == 0 else "assistant"
    parts: list[Part] = []
    for k in range(rng.randint(0, 4)):
        kind = rng.choice(["text", "thinking", "tool", "context", "summary", "redacted"])
        if kind == "text":
            parts.append(TextPart(text=f"text {n}.{k} ünï ✓", cancelled=rng.choice([None, True])))
        elif kind == "thinking":
            parts.append(ThinkingPart(text=f"think {n}", signature=rng.choice([None, "sig=="])))
        elif kind == "redacted":
            parts.append(ThinkingPart(text="", data="opaque=="))
        elif kind == "tool":
            parts.append(
                ToolPart(
                    call_id=f"toolu_{n}_{k}",
                    tool=rng.choice(["read", "bash", "edit"]),
                    input={"path": f"src/{n}.py", "n": k, "deep": {"x": [1, None, "y"]}},
                    status=rng.choice(["completed", "error", "cancelled", "interrupted"]),
                    output=rng.choice([None, "", f"output {n}\n" * 3]),
                    title=rng.choice([None, f"Read {n}"]),
                )
            )
        elif kind == "context":
            parts.append(
                ContextPart(
                    uri=f"file:///w/{n}.py",
                    range=rng.choice(
                        [
                            None,
                            Range(
                                start=Position(line=1, character=0),
                                end=Position(line=2, character=3),
                            ),
                        ]
                    ),
                    text=rng.choice([None, "x = 1"]),
                )
            )
        else:
            parts.append(
                SummaryPart(text=f"summary {n}", summarized_messages=n, last_message_id="msg_x")
            )
    return Message(
        id=new_id("msg"),
        session_id=session_id,
        role=role,
        created_at=1_700_000_000_000 + n,
        parts=parts,
        finish_reason=rng.choice([None, "end_turn", "tool_use", "max_tokens", "cancelled"])
        if role == "assistant"
        else None,
        usage=rng.choice(
            [
                None,
                Usage(
                    input_tokens=n,
                    output_tokens=2 * n,
                    cache_read_tokens=3,
                    cache_write_tokens=n % 7,
                    cost_usd=n / 1000,
                ),
            ]
        ),
        error=rng.choice([None, None, f"error {n}"]),
        reverted=rng.random() < 0.1,
    )


async def test_a_loaded_session_equals_the_session_written(db_path: Path) -> None:
    rng = random.Random(7)
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "m")
    other = await store.create_session("o", "/w", "m")
    written = [varied_message(rng, session.id, n) for n in range(300)]
    for n, message in enumerate(written):
        await store.add_message(message)
        if n % 50 == 0:
            await store.add_message(varied_message(rng, other.id, n))
    await store.close()

    store = await Store.open(db_path)
    loaded = await store.load_messages(session.id)
    since = await store.load_messages(session.id, since_message_id=written[120].id)
    await store.close()
    assert loaded == written
    assert since == written[120:]
    for got, wrote in zip(loaded, written, strict=True):
        # Built without validation, but the same model in every respect that matters.
        assert type(got) is Message
        assert got.model_dump() == wrote.model_dump()
        assert got.wire() == wrote.wire()
        assert got.model_fields_set == Message.model_validate(wrote.model_dump()).model_fields_set
        assert [type(p) for p in got.parts] == [type(p) for p in wrote.parts]
    # And it behaves as one: assignment, copies, JSON.
    first = loaded[1]
    first.reverted = True
    assert first.reverted is True and first.model_copy().reverted is True
    assert Message.model_validate_json(first.model_dump_json()) == first


async def test_a_load_from_a_summary_inserted_mid_session_starts_there(db_path: Path) -> None:
    """A compaction's summary goes before the first message it keeps: a load from it gives the
    summary and what follows, a whole load has it in its place; an unknown start is a KeyError."""
    rng = random.Random(3)
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "m")
    written = [varied_message(rng, session.id, n) for n in range(200)]
    for message in written:
        await store.add_message(message)
    summary = Message(
        id=new_id("msg"),
        session_id=session.id,
        role="user",
        created_at=5,
        parts=[SummaryPart(text="the story so far", summarized_messages=130)],
    )
    await store.add_summary(summary, written[130].id)
    await store.close()

    store = await Store.open(db_path)
    try:
        assert (await store.get_session(session.id)).summary_message_id == summary.id  # type: ignore[union-attr]
        assert await store.load_messages(session.id, summary.id) == [summary, *written[130:]]
        assert await store.load_messages(session.id) == [*written[:130], summary, *written[130:]]
        with pytest.raises(KeyError):
            await store.load_messages(session.id, "msg_not_there")
    finally:
        await store.close()


async def test_a_message_without_parts_and_one_with_gaps_in_its_indexes(db_path: Path) -> None:
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "m")
    empty = Message(id="msg_a", session_id=session.id, role="assistant", created_at=1)
    gappy = Message(
        id="msg_b",
        session_id=session.id,
        role="assistant",
        created_at=2,
        parts=[TextPart(text="zero")],
    )
    await store.add_message(empty)
    await store.add_message(gappy)
    # A part at index 2 with none at 1 (a half-streamed tool call dropped from the middle),
    # still running when the process died.
    late = ToolPart(call_id="toolu_9", tool="bash", input={}, status="running")
    await store.save_part("msg_b", 2, late)
    await store.close()

    store = await Store.open(db_path)
    loaded = await store.load_messages(session.id)
    assert [m.id for m in loaded] == ["msg_a", "msg_b"]
    assert loaded[0].parts == []
    assert loaded[1].parts[0] == TextPart(text="zero")
    assert loaded[1].tool_parts()[0].status == "interrupted"
    # The repair went to the part's own row (idx 2).
    again = await store.load_messages(session.id, repair=False)
    await store.close()
    assert again == loaded
    conn = sqlite3.connect(db_path)
    rows = conn.execute("SELECT idx FROM parts WHERE message_id = 'msg_b' ORDER BY idx").fetchall()
    conn.close()
    assert rows == [(0,), (2,)]


async def _session_with_rows(db_path: Path) -> tuple[Store, str]:
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "m")
    for n in range(5):
        await store.add_message(
            Message(
                id=f"msg_{n}",
                session_id=session.id,
                role="assistant",
                created_at=n,
                parts=[TextPart(text=f"t{n}"), TextPart(text=f"u{n}")],
                usage=Usage(input_tokens=n),
                finish_reason="end_turn",
            )
        )
    return store, session.id


def _corrupt(db_path: Path, sql: str) -> None:
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute(sql)
    conn.close()


@pytest.mark.parametrize(
    ("sql", "where"),
    [
        # Not JSON at all.
        (
            'UPDATE parts SET data = \'{"type": "text", "te\' WHERE message_id = \'msg_2\''
            " AND idx = 1",
            "part 1 (in order) of message 'msg_2'",
        ),
        # Two values in one row: joined with its neighbours it would parse, alone it does not.
        (
            'UPDATE parts SET data = \'{"type":"text","text":"a"},'
            '{"type":"text","text":"b"}\' WHERE message_id = \'msg_3\' AND idx = 0',
            "part 0 (in order) of message 'msg_3'",
        ),
        # A part type this version does not know.
        (
            'UPDATE parts SET data = \'{"type":"image","url":"x"}\''
            " WHERE message_id = 'msg_1' AND idx = 0",
            "part 0 (in order) of message 'msg_1'",
        ),
        # A field this version does not know.
        (
            'UPDATE parts SET data = \'{"type":"text","text":"a","colour":"red"}\''
            " WHERE message_id = 'msg_4' AND idx = 1",
            "part 1 (in order) of message 'msg_4'",
        ),
        ("UPDATE messages SET usage = '{\"input_tokens\": \"many\"}' WHERE id = 'msg_0'", "usage"),
        (
            "UPDATE messages SET finish_reason = 'pause_turn' WHERE id = 'msg_2'",
            "message 'msg_2'",
        ),
        ("UPDATE messages SET created_at = 'yesterday' WHERE id = 'msg_3'", "message 'msg_3'"),
    ],
)
async def test_a_corrupt_row_fails_the_load_and_says_where(
    db_path: Path, sql: str, where: str
) -> None:
    store, session_id = await _session_with_rows(db_path)
    _corrupt(db_path, sql)
    with pytest.raises(ValidationError) as info:
        await store.load_messages(session_id)
    assert any(where in note for note in getattr(info.value, "__notes__", []))
    await store.close()


async def test_a_valid_row_of_unusual_types_is_validated_not_trusted(db_path: Path) -> None:
    store, session_id = await _session_with_rows(db_path)
    # SQLite keeps what it is given: a REAL created_at passes validation (as an int).
    _corrupt(db_path, "UPDATE messages SET created_at = 3.0 WHERE id = 'msg_3'")
    loaded = await store.load_messages(session_id)
    await store.close()
    assert loaded[3].created_at == 3 and type(loaded[3].created_at) is int


async def test_loaded_messages_share_one_fields_set_that_assignment_leaves_whole(
    db_path: Path,
) -> None:
    store, session_id = await _session_with_rows(db_path)
    loaded = await store.load_messages(session_id)
    await store.close()
    every_field = set(Message.model_fields)
    assert all(m.model_fields_set == every_field for m in loaded)
    # Setting a field on one message (as the loop does) changes nothing in the others.
    before = [m.model_dump() for m in loaded[1:]]
    loaded[0].finish_reason = "error"
    loaded[0].reverted = True
    assert [m.model_dump() for m in loaded[1:]] == before
    assert all(m.model_fields_set == every_field for m in loaded)
    copy = loaded[0].model_copy()
    assert copy.model_fields_set == every_field
    assert copy.model_fields_set is not loaded[0].model_fields_set


async def test_a_part_row_written_with_camel_case_keys_still_loads(db_path: Path) -> None:
    # The store writes field names; a row holding the wire's camelCase keys (written by hand,
    # or by some other tool) is still a valid part: validated alone, by alias.
    store, session_id = await _session_with_rows(db_path)
    expected = await store.load_messages(session_id)
    row = (
        '{"type":"tool","callId":"toolu_camel","tool":"read","input":{"path":"a.py"},'
        '"status":"completed","output":"x","title":"Read a.py"}'
    )
    _corrupt(
        db_path,
        "UPDATE parts SET data = '" + row + "' WHERE message_id = 'msg_1' AND idx = 0",
    )
    loaded = await store.load_messages(session_id)
    await store.close()
    part = loaded[1].parts[0]
    assert isinstance(part, ToolPart) and part.call_id == "toolu_camel"
    assert part.input == {"path": "a.py"} and part.status == "completed"
    assert loaded[2:] == expected[2:]


def test_the_shortcut_build_assumes_what_message_still_is() -> None:
    # store.rows builds loaded messages the way model_construct does; it relies on this.
    assert store_rows.CONSTRUCT_OK
    value = {
        "id": "msg_1",
        "session_id": "ses_1",
        "role": "assistant",
        "created_at": 5,
        "parts": [TextPart(text="a")],
        "finish_reason": "tool_use",
        "usage": Usage(input_tokens=1),
        "error": None,
        "reverted": False,
    }
    built = store_rows.message_from_row(dict(value))
    validated = Message.model_validate(value)
    assert built == validated
    assert built.__dict__ == validated.__dict__
    assert built.model_fields_set == validated.model_fields_set
    assert built.__pydantic_extra__ == validated.__pydantic_extra__
    assert built.__pydantic_private__ == validated.__pydantic_private__


def test_collector_paused_nests_and_leaves_a_disabled_collector_alone() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_update_message_with_session_usage_writes_both(db_path: Path) -> None:
    store = await Store.open(db_path)
    session = await store.create_session("t", "/w", "m")
    message = Message(id="msg_a", session_id=session.id, role="assistant", created_at=1)
    await store.add_message(message)
    await store.add_session_usage(session.id, Usage(input_tokens=5, cost_usd=0.25))
    message.usage = Usage(input_tokens=10, output_tokens=2, cost_usd=0.5)
    message.finish_reason = "end_turn"
    await store.update_message(message, session_usage=message.usage)
    record = await store.get_session(session.id)
    assert record is not None
    assert record.usage == Usage(input_tokens=15, output_tokens=2, cost_usd=0.75)
    assert await store.load_messages(session.id) == [message]
    await store.close()


async def test_a_part_row_holding_two_values_fails_the_load_and_says_where(db_path: Path) -> None:
    store, session_id = await _session_with_rows(db_path)
    forged = TextPart(text="x").model_dump_json() + "," + TextPart(text="y").model_dump_json()
    _corrupt(
        db_path,
        "UPDATE parts SET data = '" + forged + "' WHERE message_id = 'msg_2' AND idx = 1",
    )
    with pytest.raises(ValidationError) as info:
        await store.load_messages(session_id)
    assert any(
        "part 1 (in order) of message 'msg_2'" in note
        for note in getattr(info.value, "__notes__", [])
    )
    await store.close()
