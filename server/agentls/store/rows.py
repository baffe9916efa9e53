"""Rows to models: the records the store returns, and the fast path that builds a session's
messages from their rows.

Loading a long session costs more than anything else the store does: 5,000 messages are 10,000
rows of part JSON and 5,000 of message columns. The parts' (and usages') JSON is validated in
one call per load, and each message is built as model_construct builds one, without validating
its columns again once they have the types validation would insist on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, NamedTuple, TypeVar, get_args

import aiosqlite
from pydantic import BaseModel, TypeAdapter, ValidationError

from agentls.events import SessionMode
from agentls.history import (
    FINISHED_TOOL_STATUSES,
    FinishReason,
    Message,
    Part,
    ToolPart,
    Usage,
)
from agentls.store.usage import subagent_usage_of
from agentls.wire import WireModel

V = TypeVar("V")


class StoredGrant(NamedTuple):
    """A session's permission grant as stored: exact (a literal pattern, no glob) is False for
    the grants of databases older than the flag."""

    tool: str
    pattern: str | None
    action: str
    exact: bool = False


class ProjectGrant(NamedTuple):
    """A grant of every session of one workspace root ("always, in this project"), with the
    words the user was shown when it was given."""

    id: int
    root: str
    tool: str
    pattern: str | None
    action: str
    exact: bool
    label: str
    created_at: int


class SessionRecord(WireModel):
    id: str
    title: str
    cwd: str
    model: str
    created_at: int
    updated_at: int
    summary_message_id: str | None = None
    usage: Usage = Usage()
    mode: SessionMode = "build"
    # A sub-agent's session (the task tool's): its parent session and its agent type.
    parent_id: str | None = None
    agent: str | None = None
    # The sub-agents' share of `usage` (which counts it); None: no sub-agent ran.
    subagent_usage: Usage | None = None


SESSION_COLUMNS = (
    "id, title, cwd, model, created_at, updated_at, summary_message_id,"
    " input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, mode,"
    " parent_id, agent, subagent_usage, usage_estimated"
)
PROJECT_GRANT_COLUMNS = "id, root, tool, pattern, action, exact, label, created_at"


def session_from_row(row: Sequence[Any]) -> SessionRecord:
    """A session from its SESSION_COLUMNS."""
    return SessionRecord(
        id=row[0],
        title=row[1],
        cwd=row[2],
        model=row[3],
        created_at=row[4],
        updated_at=row[5],
        summary_message_id=row[6],
        usage=Usage(
            input_tokens=row[7],
            output_tokens=row[8],
            cache_read_tokens=row[9],
            cache_write_tokens=row[10],
            cost_usd=row[11],
            estimated=True if row[16] else None,
        ),
        mode="plan" if row[12] == "plan" else "build",
        parent_id=row[13],
        agent=row[14],
        subagent_usage=subagent_usage_of(row[15]),
    )


def project_grant_from_row(row: Sequence[Any]) -> ProjectGrant:
    """A project grant from its PROJECT_GRANT_COLUMNS."""
    return ProjectGrant(
        id=row[0],
        root=row[1],
        tool=row[2],
        pattern=row[3],
        action=row[4],
        exact=bool(row[5]),
        label=row[6],
        created_at=row[7],
    )


def part_json(part: Part) -> str:
    """A part as its row holds it."""
    return part.model_dump_json()


def usage_json(usage: Usage | None) -> str | None:
    """A message's usage as its row holds it."""
    return None if usage is None else usage.model_dump_json()


# ---- a session's messages ------------------------------------------------------------------

_PART_ADAPTER: TypeAdapter[Part] = TypeAdapter(Part)
_PARTS_ADAPTER: TypeAdapter[list[Part]] = TypeAdapter(list[Part])
_USAGE_ADAPTER: TypeAdapter[Usage] = TypeAdapter(Usage)
_USAGES_ADAPTER: TypeAdapter[list[Usage]] = TypeAdapter(list[Usage])
_MESSAGE_FIELDS = frozenset(Message.model_fields)
_ROLES = frozenset(get_args(Message.model_fields["role"].annotation))
_FINISH_REASONS = frozenset(get_args(FinishReason))


def constructible(cls: type[BaseModel]) -> bool:
    """Whether a model is whole once its __dict__ holds its (valid) field values, as construct()
    makes it: no private attributes, no post-init hook, no extra fields kept."""
    return (
        not cls.__private_attributes__
        and cls.__pydantic_post_init__ is None
        and cls.model_config.get("extra") != "allow"
    )


# What _message assumes of Message to build one as model_construct does: these fields, and
# constructible. Otherwise it validates them all.
CONSTRUCT_OK = constructible(Message) and set(_MESSAGE_FIELDS) == {
    "id",
    "session_id",
    "role",
    "created_at",
    "parts",
    "finish_reason",
    "usage",
    "error",
    "reverted",
}

_new = object.__new__
_set = object.__setattr__


def _construct(cls: type[BaseModel], values: dict[str, Any], fields_set: set[str]) -> Any:
    """A model holding these (already valid) values, as model_construct makes one, without its
    Python loop over the fields (`constructible` says for which models that is whole)."""
    model = _new(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


_HEAD_COLUMNS = "m.id, m.role, m.created_at, m.finish_reason, m.usage, m.error, m.reverted, m.seq"


async def message_seq(conn: aiosqlite.Connection, session_id: str, message_id: str) -> int | None:
    """The seq of the message in the session; None when it is not one of the session's."""
    rows = list(
        await conn.execute_fetchall(
            "SELECT seq FROM messages WHERE id = ? AND session_id = ?", (message_id, session_id)
        )
    )
    return int(rows[0][0]) if rows else None


async def read_history(
    conn: aiosqlite.Connection, session_id: str, since_message_id: str | None
) -> tuple[list[Message], list[Message]] | None:
    """The session's messages in order (from since_message_id on) and those of them holding an
    unfinished tool call (to repair); None when since_message_id is not a message of the session.

    Two statements (run them in one read transaction: one snapshot even while another process
    writes), returning fewer values than one join would (the sqlite3 module's cost is per
    value). Counting each message's parts in SQL instead costs a lookup per message.
    """
    first = 1  # a message's seq (1, 2, ...)
    if since_message_id is not None:
        since = await message_seq(conn, session_id, since_message_id)
        if since is None:
            return None
        first = since
    heads: list[Sequence[Any]] = list(
        await conn.execute_fetchall(
            f"SELECT {_HEAD_COLUMNS} FROM messages m WHERE m.session_id = ? AND m.seq >= ?"
            " ORDER BY m.seq",
            (session_id, first),
        )
    )
    if not heads:
        return [], []
    part_rows: list[Sequence[Any]] = list(
        await conn.execute_fetchall(
            "SELECT m.seq, p.data FROM messages m JOIN parts p ON p.message_id = m.id"
            " WHERE m.session_id = ? AND m.seq BETWEEN ? AND ? ORDER BY m.seq, p.idx",
            (session_id, first, heads[-1][7]),
        )
    )
    return build_messages(session_id, heads, part_rows)


def build_messages(
    session_id: str, heads: Iterable[Sequence[Any]], part_rows: Iterable[Sequence[Any]]
) -> tuple[list[Message], list[Message]]:
    """Messages from their rows (the message columns, then seq) and the rows of all their parts
    in order (the message's seq, the part's JSON). Also returns those holding an unfinished tool
    call (to repair)."""
    heads = list(heads)
    part_rows = list(part_rows)
    datas = [row[1] for row in part_rows]
    counts = Counter(row[0] for row in part_rows)
    ends = list(accumulate(counts.get(head[7], 0) for head in heads))
    if (ends[-1] if ends else 0) != len(datas):
        raise RuntimeError("the parts read do not match the messages read")

    def part_places() -> Iterator[str]:
        start = 0
        for head, end in zip(heads, ends, strict=True):
            for position in range(end - start):
                yield f"part {position} (in order) of message {head[0]!r}"
            start = end

    # The JSON of every part (and of every usage) validated in one call: pydantic-core's cost
    # is mostly per call, and a session has thousands of parts.
    parts = _validate_each(_PARTS_ADAPTER, _PART_ADAPTER, datas, part_places)
    usages = iter(
        _validate_each(
            _USAGES_ADAPTER,
            _USAGE_ADAPTER,
            [head[4] for head in heads if head[4] is not None],
            lambda: (f"usage of message {head[0]!r}" for head in heads if head[4] is not None),
        )
    )
    messages: list[Message] = []
    start = 0
    # One set of the fields present, shared: each message would hold a copy of the same set
    # (3.5 MB for 5,000 messages, the memory and its page faults a load pays for). Pydantic
    # only ever adds to that set, and never a name it lacks, as it holds every field.
    fields_set = set(_MESSAGE_FIELDS)
    for (message_id, role, created_at, finish_reason, usage, error, reverted, _), end in zip(
        heads, ends, strict=True
    ):
        messages.append(
            message_from_row(
                {
                    "id": message_id,
                    "session_id": session_id,
                    "role": role,
                    "created_at": created_at,
                    "parts": parts[start:end],
                    "finish_reason": finish_reason,
                    "usage": None if usage is None else next(usages),
                    "error": error,
                    "reverted": bool(reverted),
                },
                fields_set,
            )
        )
        start = end
    # type(), not isinstance(): pydantic's metaclass makes isinstance() an ABC check.
    live = {id(p) for p in parts if type(p) is ToolPart and p.status not in FINISHED_TOOL_STATUSES}
    if not live:
        return messages, []
    return messages, [m for m in messages if any(id(p) in live for p in m.parts)]


def message_from_row(value: dict[str, Any], fields_set: set[str] | None = None) -> Message:
    """A message from the column values of its row (its parts and usage already validated).

    Built the way Message.model_construct builds a model (no validation: the row is ours,
    written from a validated message, and its parts and usage were validated above), once each
    value has the type validation would insist on; model_construct itself, a Python loop over
    the fields, costs more than validating. A row failing that check is validated, so a corrupt
    one raises pydantic's ValidationError, as it always did, with a note naming the message.
    tests/store/test_load.py checks that a message built so equals the validated one. Messages
    built from one load share fields_set (every field, see build_messages).
    """
    finish_reason = value["finish_reason"]
    error = value["error"]
    if (
        CONSTRUCT_OK
        and type(value["id"]) is str
        and value["role"] in _ROLES
        and type(value["created_at"]) is int
        and (finish_reason is None or finish_reason in _FINISH_REASONS)
        and (error is None or type(error) is str)
    ):
        message: Message = _construct(
            Message, value, set(_MESSAGE_FIELDS) if fields_set is None else fields_set
        )
        return message
    try:
        return Message.model_validate(value)
    except ValidationError as exc:
        exc.add_note(f"in the stored message {value['id']!r}")
        raise


def _validate_each(
    many: TypeAdapter[list[V]],
    one: TypeAdapter[V],
    texts: list[str],
    places: Callable[[], Iterable[str]],
) -> list[V]:
    """Each JSON text validated, all in one call (as one array). When that fails, each is
    validated alone, so the error is the one a lone corrupt row would give, with a note saying
    which row it is."""
    if not texts:
        return []
    try:
        # By field name only: the store writes model_dump_json(), which uses the names (a row
        # that does not is validated alone below, by alias too); 10% faster.
        values = many.validate_json("[" + ",".join(texts) + "]", by_alias=False, by_name=True)
    except ValueError:
        pass
    else:
        # Our rows each hold one JSON value, and then the array's items are their values, in
        # order. A row holding anything else changes the count or breaks the array (two rows
        # would have to be forged to complement each other to escape both checks).
        if len(values) == len(texts):
            return values
    out: list[V] = []
    for text, place in zip(texts, places(), strict=True):
        try:
            out.append(one.validate_json(text))
        except ValidationError as exc:
            exc.add_note(f"in the stored {place}")
            raise
    return out
