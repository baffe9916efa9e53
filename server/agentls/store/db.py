"""SQLite storage (through aiosqlite) for sessions, their messages and parts, and permission grants."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from itertools import accumulate
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, TypeVar, get_args

import aiosqlite
from pydantic import TypeAdapter, ValidationError

from agentls.history import (
    FINISHED_TOOL_STATUSES,
    FinishReason,
    Message,
    Part,
    ToolPart,
    Usage,
    WireModel,
    new_id,
    now_ms,
    repair_interrupted,
)
from agentls.store import errors, packed, session_locks
from agentls.store.errors import StoreError
from agentls.store.packed import PackError

log = logging.getLogger(__name__)

T = TypeVar("T")
V = TypeVar("V")

DB_FILENAME = "agentls.db"
# How long a statement waits for another process's lock before failing with "database is locked".
BUSY_TIMEOUT_MS = 5000

_PART_ADAPTER = packed.PART_ADAPTER
_PARTS_ADAPTER: TypeAdapter[list[Part]] = TypeAdapter(list[Part])
_USAGE_ADAPTER: TypeAdapter[Usage] = TypeAdapter(Usage)
_USAGES_ADAPTER: TypeAdapter[list[Usage]] = TypeAdapter(list[Usage])
_MESSAGE_FIELDS = frozenset(Message.model_fields)
_ROLES = frozenset(get_args(Message.model_fields["role"].annotation))
_FINISH_REASONS = frozenset(get_args(FinishReason))
# What _message assumes of Message to build one as model_construct does: these fields, and
# packed.constructible. Otherwise it validates them all.
_CONSTRUCT_OK = packed.constructible(Message) and set(_MESSAGE_FIELDS) == {
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


def _unpack_trigger(table: str, event: str, rows: list[str]) -> str:
    """A trigger dropping, after each row of `table` changed by `event`, the packed runs holding
    the message of the row's old or new state (`rows`: OLD, NEW). Part of migration 3: what it
    returns must never change (a new migration would replace the triggers)."""
    if table == "messages":
        drops = [
            f"DELETE FROM packed_messages WHERE session_id = {row}.session_id"
            f" AND first_seq <= {row}.seq AND last_seq >= {row}.seq;"
            for row in rows
        ]
    else:
        ids = ", ".join(f"{row}.message_id" for row in rows)
        drops = [
            "DELETE FROM packed_messages WHERE id IN (SELECT c.id FROM messages m"
            " JOIN packed_messages c ON c.session_id = m.session_id AND c.first_seq <= m.seq"
            f" AND c.last_seq >= m.seq WHERE m.id IN ({ids}));"
        ]
    body = " ".join(drops)
    return (
        f"CREATE TRIGGER {table}_{event.lower()}_unpacks AFTER {event} ON {table} BEGIN {body} END"
    )


# Migration N (1-based) is MIGRATIONS[N - 1]; PRAGMA user_version records the last one applied.
# Never edit a released migration: append a new one, since existing databases have already run it.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            cwd TEXT NOT NULL,
            model TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            -- Not a foreign key: a session -> message reference would make every cascaded
            -- message delete scan the sessions table to null it out.
            summary_message_id TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL NOT NULL DEFAULT 0
        )
        """,
        "CREATE INDEX sessions_by_updated ON sessions (updated_at DESC)",
        "CREATE INDEX sessions_by_cwd_updated ON sessions (cwd, updated_at DESC)",
        """
        CREATE TABLE messages (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            created_at INTEGER NOT NULL,
            finish_reason TEXT,
            usage TEXT,
            error TEXT,
            reverted INTEGER NOT NULL DEFAULT 0,
            -- Also the index that loads a session in order and serves the cascade from sessions.
            UNIQUE (session_id, seq)
        )
        """,
        """
        CREATE TABLE parts (
            message_id TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            type TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (message_id, idx)
        )
        """,
        """
        CREATE TABLE permission_grants (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            tool TEXT NOT NULL,
            pattern TEXT,
            action TEXT NOT NULL,
            created_at INTEGER NOT NULL
        )
        """,
        "CREATE INDEX permission_grants_by_session ON permission_grants (session_id)",
    ),
    (
        # Every change a tool made to a file, so agent/revert can undo them in reverse order.
        """
        CREATE TABLE file_changes (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            message_id TEXT NOT NULL,
            path TEXT NOT NULL,
            before TEXT,
            after TEXT NOT NULL,
            created_at INTEGER NOT NULL
        )
        """,
        "CREATE INDEX file_changes_by_session ON file_changes (session_id, id)",
    ),
    (
        # Runs of finished messages kept packed (store/packed.py), read instead of their rows.
        # A run holds the `count` messages of its session with seq first_seq..last_seq; runs
        # do not overlap. A table with rowids, and an index holding the seq range: finding a
        # seq's run then reads none of the (large) data, which a WITHOUT ROWID table would.
        """
        CREATE TABLE packed_messages (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            count INTEGER NOT NULL,
            data BLOB NOT NULL
        )
        """,
        "CREATE INDEX packed_messages_by_seq ON packed_messages (session_id, first_seq, last_seq)",
        # Any change to a row of a packed message drops its run, in the same transaction and
        # whichever process makes it: a run is never read stale. (A message's seq changes when
        # a compaction inserts its summary before it: the runs at both seqs go.)
        _unpack_trigger("messages", "INSERT", ["NEW"]),
        _unpack_trigger("messages", "UPDATE", ["OLD", "NEW"]),
        _unpack_trigger("messages", "DELETE", ["OLD"]),
        _unpack_trigger("parts", "INSERT", ["NEW"]),
        _unpack_trigger("parts", "UPDATE", ["OLD", "NEW"]),
        _unpack_trigger("parts", "DELETE", ["OLD"]),
    ),
    (
        # "Always" grants are literal (permission/grants.py): `exact` marks a pattern compared to
        # the subject as it is, no glob. Rows of older databases read 0 and keep their meaning.
        "ALTER TABLE permission_grants ADD COLUMN exact INTEGER NOT NULL DEFAULT 0",
        # "Always, in this project": grants every later session of a workspace root loads.
        """
        CREATE TABLE project_grants (
            id INTEGER PRIMARY KEY,
            root TEXT NOT NULL,
            tool TEXT NOT NULL,
            pattern TEXT,
            action TEXT NOT NULL,
            exact INTEGER NOT NULL DEFAULT 0,
            label TEXT NOT NULL,
            created_at INTEGER NOT NULL
        )
        """,
        "CREATE INDEX project_grants_by_root ON project_grants (root, id)",
    ),
    # Which process runs a turn of a session (store/session_locks.py).
    session_locks.MIGRATION,
)
# A packed run holds at least this many messages (fewer load from their rows in a few ms), and
# one packing writes at most PACK_MAX_MESSAGES (holding the write lock meanwhile).
PACK_MIN_MESSAGES = 200
PACK_MAX_MESSAGES = 1000
SCHEMA_VERSION = len(MIGRATIONS)


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


class StoreVersionError(StoreError):
    """The database was written by a newer agentls whose schema this one does not know."""


class SessionRecord(WireModel):
    id: str
    title: str
    cwd: str
    model: str
    created_at: int
    updated_at: int
    summary_message_id: str | None = None
    usage: Usage = Usage()


def default_data_dir() -> Path:
    """$AGENTLS_DATA_DIR, else $XDG_DATA_HOME/agentls, else ~/.local/share/agentls."""
    explicit = os.environ.get("AGENTLS_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "agentls"
    return Path.home() / ".local" / "share" / "agentls"


def default_db_path() -> Path:
    return default_data_dir() / DB_FILENAME


_SESSION_COLUMNS = (
    "id, title, cwd, model, created_at, updated_at, summary_message_id,"
    " input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd"
)


def _session_from_row(row: Sequence[Any]) -> SessionRecord:
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
        ),
    )


def _part_json(part: Part) -> str:
    return part.model_dump_json()


def _usage_json(usage: Usage | None) -> str | None:
    return None if usage is None else usage.model_dump_json()


def _add_session_usage(session_id: str, usage: Usage) -> tuple[str, tuple[Any, ...]]:
    # Added in SQL rather than read-modify-write here, so no addition can be lost.
    return (
        "UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,"
        " cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,"
        " cost_usd = round(cost_usd + ?, 8), updated_at = ? WHERE id = ?",
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.cost_usd,
            now_ms(),
            session_id,
        ),
    )


def _consume_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def _transaction(
    conn: aiosqlite.Connection,
    body: Callable[[aiosqlite.Connection], Awaitable[T]],
    begin: str,
) -> T:
    """Run body between `begin` and COMMIT, rolling back on any exception."""
    await conn.execute(begin)
    try:
        result = await body(conn)
    except BaseException:
        # SQLite may already have rolled back by itself (e.g. on SQLITE_FULL).
        if conn.in_transaction:
            await conn.execute("ROLLBACK")
        raise
    await conn.execute("COMMIT")
    return result


async def _user_version(conn: aiosqlite.Connection) -> int:
    rows = list(await conn.execute_fetchall("PRAGMA user_version"))
    return int(rows[0][0])


def _check_version(version: int, known: int) -> None:
    if version > known:
        raise StoreVersionError(
            f"database schema version {version} is newer than this agentls knows ({known}); "
            "upgrade agentls, or set AGENTLS_DATA_DIR to use another database"
        )


async def _migrate(conn: aiosqlite.Connection) -> None:
    migrations = MIGRATIONS
    known = len(migrations)
    version = await _user_version(conn)
    _check_version(version, known)
    if version == known:
        return

    async def apply(conn: aiosqlite.Connection) -> None:
        # Read again under the write lock: another process may have migrated in the meantime.
        version = await _user_version(conn)
        _check_version(version, known)
        for number in range(version + 1, known + 1):
            # Statement by statement, not executescript(), which would COMMIT first.
            for statement in migrations[number - 1]:
                await conn.execute(statement)
            await conn.execute(f"PRAGMA user_version = {number}")

    # IMMEDIATE takes the write lock up front, so two processes opening a fresh database at
    # once cannot both run migration 1; all pending migrations commit together or not at all.
    await _transaction(conn, apply, "BEGIN IMMEDIATE")


class Store:
    """One connection to the database, shared by the tasks of one event loop."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        # aiosqlite runs statements one at a time, but the statements of two tasks' transactions
        # would interleave on the shared connection; this lock keeps each transaction whole and
        # keeps readers from seeing another task's uncommitted rows.
        self._lock = asyncio.Lock()
        self._closed = False

    @classmethod
    async def open(cls, path: Path | str) -> Store:
        """Open (create, migrate) the database; raises StoreError saying what is wrong with it
        (see store/errors.py), as does every write and read of the store."""
        path = Path(path)
        try:
            return await cls._open(path)
        except StoreVersionError as exc:
            raise StoreVersionError(f"{path}: {exc}", path) from None
        except sqlite3.Error as exc:
            raise errors.from_sqlite(exc, path) from exc
        except OSError as exc:
            raise errors.from_os(exc, path) from exc

    @classmethod
    async def _open(cls, path: Path) -> Store:
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: the sqlite3 module must not open transactions behind our back;
        # every write here says BEGIN and COMMIT itself.
        connecting = aiosqlite.connect(path, isolation_level=None)
        try:
            conn = await connecting
        except BaseException:
            # aiosqlite stops its thread on a failed connect without waiting for it; the thread
            # then answers that stop on this loop, which must not be closed by then (a process
            # that exits at once would print the thread's "Event loop is closed" traceback).
            # Joined here: it needs no help from the loop to end, and ends at once.
            thread = getattr(connecting, "_thread", None)
            if thread is not None and thread.is_alive():
                thread.join(5)
            raise
        try:
            # busy_timeout first, so that even the switch to WAL waits for another process's lock.
            await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await conn.execute("PRAGMA journal_mode = WAL")
            # With WAL, NORMAL loses no committed transaction when the process dies (only on an
            # OS crash or power loss) and saves an fsync per commit.
            await conn.execute("PRAGMA synchronous = NORMAL")
            await conn.execute("PRAGMA foreign_keys = ON")
            await _migrate(conn)
        except BaseException:
            try:
                await conn.close()
            except sqlite3.Error:  # the error that brought us here says more
                pass
            raise
        return cls(conn, path)

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                await self._conn.close()
            except sqlite3.Error as exc:  # a full disk may refuse the last checkpoint
                log.warning("closing %s: %s", self.path, errors.from_sqlite(exc, self.path))

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _exclusive(self, body: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """Run body alone on the connection, and to its end even if the caller is cancelled.

        aiosqlite finishes a statement whose awaiting task was cancelled, so a cancel in the
        middle of a transaction would leave it open on the shared connection once the lock is
        released. Shielded, every transaction commits or rolls back before the next one starts.
        """

        async def run() -> T:
            async with self._lock:
                if self._closed:
                    raise RuntimeError("the store is closed")
                try:
                    return await body(self._conn)
                except sqlite3.Error as exc:
                    if not errors.is_fault(exc):  # a statement's own error (a constraint)
                        raise
                    raise errors.from_sqlite(exc, self.path) from exc

        task = asyncio.ensure_future(run())
        # A cancelled caller never awaits the task: fetch its outcome so asyncio does not log
        # "exception was never retrieved".
        task.add_done_callback(_consume_outcome)
        return await asyncio.shield(task)

    async def _write(self, body: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """body as one write transaction: committed if it returns, rolled back if it raises."""
        return await self._exclusive(lambda conn: _transaction(conn, body, "BEGIN IMMEDIATE"))

    async def _execute(self, sql: str, params: Sequence[Any]) -> None:
        """One write statement, in a transaction of its own. The connection is in autocommit
        mode: SQLite runs a lone statement as its own transaction, atomic, taking the write
        lock as it starts (with the busy timeout), as BEGIN IMMEDIATE would. One trip to the
        database's thread instead of three (BEGIN, the statement, COMMIT)."""

        async def body(conn: aiosqlite.Connection) -> None:
            await conn.execute(sql, params)

        await self._exclusive(body)

    async def _fetchall(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        async def body(conn: aiosqlite.Connection) -> list[Sequence[Any]]:
            return list(await conn.execute_fetchall(sql, params))

        return await self._exclusive(body)

    # Sessions

    async def create_session(
        self, title: str, cwd: str, model: str, id: str | None = None
    ) -> SessionRecord:
        now = now_ms()
        record = SessionRecord(
            id=id or new_id("ses"),
            title=title,
            cwd=cwd,
            model=model,
            created_at=now,
            updated_at=now,
        )
        await self._execute(
            "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (record.id, title, cwd, model, now, now),
        )
        return record

    async def get_session(self, session_id: str) -> SessionRecord | None:
        rows = await self._fetchall(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        )
        return _session_from_row(rows[0]) if rows else None

    async def list_sessions(self, limit: int = 1000, cwd: str | None = None) -> list[SessionRecord]:
        """Most recently updated first, optionally only those of one working directory."""
        # id breaks ties, so sessions touched in the same millisecond keep a stable order.
        if cwd is None:
            rows = await self._fetchall(
                f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, id DESC LIMIT ?",
                (limit,),
            )
        else:
            rows = await self._fetchall(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE cwd = ?"
                " ORDER BY updated_at DESC, id DESC LIMIT ?",
                (cwd, limit),
            )
        return [_session_from_row(row) for row in rows]

    async def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        model: str | None = None,
        summary_message_id: str | None = None,
    ) -> None:
        """Set the fields given (None leaves a field as it is) and touch updated_at."""
        assignments = ["updated_at = ?"]
        params: list[Any] = [now_ms()]
        for column, value in (
            ("title", title),
            ("model", model),
            ("summary_message_id", summary_message_id),
        ):
            if value is not None:
                assignments.append(f"{column} = ?")
                params.append(value)
        params.append(session_id)
        await self._execute(f"UPDATE sessions SET {', '.join(assignments)} WHERE id = ?", params)

    async def add_session_usage(self, session_id: str, usage: Usage) -> None:
        """Add usage to the session's totals and touch updated_at."""
        await self._execute(*_add_session_usage(session_id, usage))

    async def delete_session(self, session_id: str) -> None:
        """Delete the session with its messages, parts and grants (ON DELETE CASCADE)."""
        await self._execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    # Messages and parts

    async def add_message(self, message: Message) -> None:
        """Append the message, as its session's next seq, with all its parts, atomically."""

        async def body(conn: aiosqlite.Connection) -> None:
            # seq is computed inside the INSERT, under the write lock, so no two messages share one.
            await conn.execute(
                "INSERT INTO messages"
                " (id, session_id, seq, role, created_at, finish_reason, usage, error, reverted)"
                " VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?),"
                " ?, ?, ?, ?, ?, ?)",
                (
                    message.id,
                    message.session_id,
                    message.session_id,
                    message.role,
                    message.created_at,
                    message.finish_reason,
                    _usage_json(message.usage),
                    message.error,
                    int(message.reverted),
                ),
            )
            if message.parts:
                await conn.executemany(
                    "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)",
                    [
                        (message.id, index, part.type, _part_json(part))
                        for index, part in enumerate(message.parts)
                    ],
                )
            await conn.execute(
                "UPDATE sessions SET updated_at = ? WHERE id = ?", (now_ms(), message.session_id)
            )

        await self._write(body)

    async def update_message(self, message: Message, *, session_usage: Usage | None = None) -> None:
        """Store the message's finish_reason, usage, error and reverted flag (not its parts);
        with session_usage, also add that to its session's totals (as add_session_usage does),
        in the same transaction."""

        async def body(conn: aiosqlite.Connection) -> None:
            await conn.execute(
                "UPDATE messages SET finish_reason = ?, usage = ?, error = ?, reverted = ?"
                " WHERE id = ?",
                (
                    message.finish_reason,
                    _usage_json(message.usage),
                    message.error,
                    int(message.reverted),
                    message.id,
                ),
            )
            if session_usage is not None:
                await conn.execute(*_add_session_usage(message.session_id, session_usage))

        await self._write(body)

    async def save_part(self, message_id: str, index: int, part: Part) -> None:
        """Insert the part at this index of the message, or replace the one there."""
        await self._execute(
            "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (message_id, idx) DO UPDATE SET type = excluded.type, data = excluded.data",
            (message_id, index, part.type, _part_json(part)),
        )

    async def clear_parts(self, message_id: str) -> None:
        """Delete all the message's parts (e.g. a step that is retried from scratch)."""
        await self._execute("DELETE FROM parts WHERE message_id = ?", (message_id,))

    async def replace_parts(self, message_id: str, parts: Sequence[Part]) -> None:
        """Replace all the message's parts with these, atomically.

        Prefer this to clear_parts followed by save_part calls: a crash in between would
        leave the message without its parts.
        """

        async def body(conn: aiosqlite.Connection) -> None:
            await conn.execute("DELETE FROM parts WHERE message_id = ?", (message_id,))
            await conn.executemany(
                "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)",
                [
                    (message_id, index, part.type, _part_json(part))
                    for index, part in enumerate(parts)
                ],
            )

        await self._write(body)

    async def add_summary(self, summary: Message, before_message_id: str | None) -> None:
        """Compaction: insert the summary message just before `before_message_id` (at the end
        when None) and make it the session's summary_message_id, atomically, so later loads
        (load_messages with since_message_id) start at the summary and keep what follows it.
        """
        session_id = summary.session_id

        async def body(conn: aiosqlite.Connection) -> None:
            seq: int | None = None
            if before_message_id is not None:
                seq = await _message_seq(conn, session_id, before_message_id)
                if seq is None:
                    raise KeyError(
                        f"message {before_message_id!r} is not in session {session_id!r}"
                    )
                # Make room: shift the later messages up by one, through negative values so no
                # two rows ever share a seq (SQLite checks UNIQUE row by row).
                await conn.execute(
                    "UPDATE messages SET seq = -seq - 1 WHERE session_id = ? AND seq >= ?",
                    (session_id, seq),
                )
                await conn.execute(
                    "UPDATE messages SET seq = -seq WHERE session_id = ? AND seq < 0",
                    (session_id,),
                )
            await conn.execute(
                "INSERT INTO messages"
                " (id, session_id, seq, role, created_at, finish_reason, usage, error, reverted)"
                " VALUES (?, ?, COALESCE(?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages"
                " WHERE session_id = ?)), ?, ?, ?, ?, ?, ?)",
                (
                    summary.id,
                    session_id,
                    seq,
                    session_id,
                    summary.role,
                    summary.created_at,
                    summary.finish_reason,
                    _usage_json(summary.usage),
                    summary.error,
                    int(summary.reverted),
                ),
            )
            await conn.executemany(
                "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)",
                [
                    (summary.id, index, part.type, _part_json(part))
                    for index, part in enumerate(summary.parts)
                ],
            )
            await conn.execute(
                "UPDATE sessions SET summary_message_id = ?, updated_at = ? WHERE id = ?",
                (summary.id, now_ms(), session_id),
            )

        await self._write(body)

    async def load_messages(
        self, session_id: str, since_message_id: str | None = None, *, repair: bool = True
    ) -> list[Message]:
        """The session's messages in order, from since_message_id (inclusive) when given.

        With repair (the default) unfinished tool calls are marked interrupted, both in the
        result and on disk. Pass repair=False to read a session whose turn is running in this
        process, whose live tool calls must not be marked interrupted.
        """

        use_runs = True

        async def read(
            conn: aiosqlite.Connection,
        ) -> tuple[list[Message], list[tuple[Message, list[int]]]] | None:
            history = await _read_history(conn, session_id, since_message_id, use_runs=use_runs)
            if history is None:
                return None
            messages, unfinished = history
            # Where the parts of the messages to repair are on disk (their idx, in order).
            located = [
                (
                    message,
                    [
                        row[0]
                        for row in await conn.execute_fetchall(
                            "SELECT idx FROM parts WHERE message_id = ? ORDER BY idx",
                            (message.id,),
                        )
                    ],
                )
                for message in (unfinished if repair else [])
            ]
            return messages, located

        async def body(conn: aiosqlite.Connection) -> list[Message]:
            nonlocal use_runs
            try:
                loaded = await _transaction(conn, read, "BEGIN")
            except PackError as exc:
                # Read from the rows instead, which are the record; the session's runs go (the
                # agent packs it again), if the write lock can be had.
                log.warning("session %s: %s; reading its messages from their rows", session_id, exc)
                use_runs = False
                loaded = await _transaction(conn, read, "BEGIN")
                try:  # one statement: a transaction of its own (see _execute)
                    await conn.execute(
                        "DELETE FROM packed_messages WHERE session_id = ?", (session_id,)
                    )
                except sqlite3.Error:
                    log.warning("session %s: its packed runs could not be dropped", session_id)
            if loaded is None:
                raise KeyError(f"message {since_message_id!r} is not in session {session_id!r}")
            messages, unfinished = loaded
            if not unfinished:
                return messages
            # Where each unfinished tool part lives on disk, found by the part object's identity.
            locations = {
                id(part): (message.id, index)
                for message, indexes in unfinished
                for part, index in zip(message.parts, indexes, strict=True)
            }
            # Only the messages that need it: scanning thousands of finished ones is wasted time.
            changed = repair_interrupted([message for message, _ in unfinished])
            if changed:
                updates = [(_part_json(part), *locations[id(part)]) for part in changed]

                async def persist(conn: aiosqlite.Connection) -> None:
                    await conn.executemany(
                        "UPDATE parts SET data = ? WHERE message_id = ? AND idx = ?", updates
                    )

                # Still under the lock, so no newer state of these parts can have been saved
                # since the read.
                await _transaction(conn, persist, "BEGIN IMMEDIATE")
            return messages

        return await self._exclusive(body)

    async def pack_messages(
        self,
        session_id: str,
        *,
        min_messages: int = PACK_MIN_MESSAGES,
        max_messages: int = PACK_MAX_MESSAGES,
    ) -> int:
        """Pack the session's oldest messages that no packed run holds (at most max_messages),
        as one run, when there are at least min_messages of them before the first message
        holding an unfinished tool call (a turn running, or one to repair at the next load).
        Returns how many it packed (0: too few). Call it when the session is idle: a run whose
        messages change again is dropped (see packed_messages' triggers) and its work lost.
        """

        async def body(conn: aiosqlite.Connection) -> int:
            # A load starts at the session's summary (after a compaction), and uses only the
            # runs starting there or later: what comes before it is never packed.
            rows = list(
                await conn.execute_fetchall(
                    "SELECT coalesce((SELECT m.seq FROM sessions s JOIN messages m"
                    " ON m.id = s.summary_message_id AND m.session_id = s.id WHERE s.id = ?), 1)",
                    (session_id,),
                )
            )
            since = int(rows[0][0])
            rows = list(
                await conn.execute_fetchall(
                    "SELECT min(m.seq) FROM messages m WHERE m.session_id = ? AND m.seq >= ?"
                    " AND NOT EXISTS (SELECT 1 FROM packed_messages c"
                    " WHERE c.session_id = m.session_id AND c.first_seq >= ?"
                    " AND c.first_seq <= m.seq AND c.last_seq >= m.seq)",
                    (session_id, since, since),
                )
            )
            if not rows or rows[0][0] is None:
                return 0
            first = int(rows[0][0])
            heads, part_rows = await _read_rows(conn, session_id, first, None, max_messages)
            if len(heads) < min_messages:
                return 0
            messages, unfinished = _build_messages(session_id, heads, part_rows)
            live = {id(message) for message in unfinished}
            count = next(
                (n for n, message in enumerate(messages) if id(message) in live), len(messages)
            )
            if count < min_messages:
                return 0
            seqs = [int(head[7]) for head in heads[:count]]
            data = packed.pack(messages[:count], seqs)
            # Runs overlapping this one go (the messages of a dropped run before later ones are
            # packed again with theirs), and those starting before the summary, which no load
            # uses.
            await conn.execute(
                "DELETE FROM packed_messages WHERE session_id = ? AND (first_seq < ?"
                " OR (first_seq <= ? AND last_seq >= ?))",
                (session_id, since, seqs[-1], first),
            )
            await conn.execute(
                "INSERT INTO packed_messages (session_id, first_seq, last_seq, count, data)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, first, seqs[-1], count, data),
            )
            return count

        return await self._write(body)

    # Session locks (store/session_locks.py)

    async def lock_session(self, session_id: str, owner: str) -> str | None:
        """Take the session's turn lock for `owner`; raises SessionLockedError when another live
        process (or another owner) holds it. Returns the id of the session's last message."""

        async def body(conn: aiosqlite.Connection) -> str | None:
            return await session_locks.acquire(conn, session_id, owner, self.path)

        return await self._write(body)

    async def unlock_session(self, session_id: str, owner: str) -> None:
        """Let go of the session's turn lock, if `owner` holds it."""

        async def body(conn: aiosqlite.Connection) -> None:
            await session_locks.release(conn, session_id, owner)

        await self._exclusive(body)

    # Permission grants

    async def add_grant(
        self,
        session_id: str,
        tool: str,
        pattern: str | None,
        action: str,
        *,
        exact: bool = False,
    ) -> None:
        """Remember a permission decision; the same grant added twice is kept once."""
        await self._execute(
            "INSERT INTO permission_grants (session_id, tool, pattern, action, exact, created_at)"
            " SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM permission_grants"
            " WHERE session_id = ? AND tool = ? AND pattern IS ? AND action = ? AND exact = ?)",
            (session_id, tool, pattern, action, int(exact), now_ms())
            + (session_id, tool, pattern, action, int(exact)),
        )

    async def add_project_grant(
        self,
        root: str,
        tool: str,
        pattern: str | None,
        action: str,
        *,
        exact: bool,
        label: str,
    ) -> None:
        """Remember a grant for every later session of workspace `root`; kept once."""
        await self._execute(
            "INSERT INTO project_grants (root, tool, pattern, action, exact, label, created_at)"
            " SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM project_grants"
            " WHERE root = ? AND tool = ? AND pattern IS ? AND action = ? AND exact = ?)",
            (root, tool, pattern, action, int(exact), label, now_ms())
            + (root, tool, pattern, action, int(exact)),
        )

    async def list_project_grants(self, root: str) -> list[ProjectGrant]:
        """The grants of workspace `root`, in the order they were given."""
        rows = await self._fetchall(
            "SELECT id, root, tool, pattern, action, exact, label, created_at FROM project_grants"
            " WHERE root = ? ORDER BY id",
            (root,),
        )
        return [_project_grant(row) for row in rows]

    async def revoke_project_grant(self, root: str, number: int) -> ProjectGrant | None:
        """Delete the `number`-th (1-based, as list_project_grants orders them) grant of `root`
        and return it; None when there is no such grant."""

        async def body(conn: aiosqlite.Connection) -> ProjectGrant | None:
            if number < 1:
                return None
            rows = list(
                await conn.execute_fetchall(
                    "SELECT id, root, tool, pattern, action, exact, label, created_at"
                    " FROM project_grants WHERE root = ? ORDER BY id LIMIT 1 OFFSET ?",
                    (root, number - 1),
                )
            )
            if not rows:
                return None
            grant = _project_grant(rows[0])
            await conn.execute("DELETE FROM project_grants WHERE id = ?", (grant.id,))
            return grant

        return await self._write(body)

    async def add_file_change(
        self, session_id: str, message_id: str, path: str, before: str | None, after: str
    ) -> None:
        """Record that a tool changed `path` from `before` (None: it did not exist) to `after`."""
        await self._execute(
            "INSERT INTO file_changes (session_id, message_id, path, before, after, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, message_id, path, before, after, now_ms()),
        )

    async def list_file_changes(
        self, session_id: str, message_ids: Sequence[str]
    ) -> list[tuple[str, str, str | None, str]]:
        """(message_id, path, before, after) of those messages' changes, oldest first."""
        if not message_ids:
            return []
        marks = ",".join("?" for _ in message_ids)
        rows = await self._fetchall(
            "SELECT message_id, path, before, after FROM file_changes"
            f" WHERE session_id = ? AND message_id IN ({marks}) ORDER BY id",
            (session_id, *message_ids),
        )
        return [(row[0], row[1], row[2], row[3]) for row in rows]

    async def list_grants(self, session_id: str) -> list[StoredGrant]:
        """The session's grants in the order they were granted."""
        rows = await self._fetchall(
            "SELECT tool, pattern, action, exact FROM permission_grants WHERE session_id = ?"
            " ORDER BY id",
            (session_id,),
        )
        return [StoredGrant(row[0], row[1], row[2], bool(row[3])) for row in rows]


def _project_grant(row: Sequence[Any]) -> ProjectGrant:
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


_HEAD_COLUMNS = "m.id, m.role, m.created_at, m.finish_reason, m.usage, m.error, m.reverted, m.seq"


def _seq_range(first: int, last: int | None) -> tuple[str, tuple[int, ...]]:
    """The condition on m.seq for first..last (no upper bound when last is None)."""
    if last is None:
        return "m.seq >= ?", (first,)
    return "m.seq BETWEEN ? AND ?", (first, last)


async def _read_rows(
    conn: aiosqlite.Connection, session_id: str, first: int, last: int | None, limit: int = -1
) -> tuple[list[Sequence[Any]], list[Sequence[Any]]]:
    """The rows of the session's messages with seq first..last in order (at most `limit`), and
    all their parts' JSON in the same order, each with its message's seq (_build_messages).

    Two statements (run them in one read transaction: one snapshot even while another process
    writes), returning fewer values than one join would (the sqlite3 module's cost is per
    value). Counting each message's parts in SQL instead costs a lookup per message.
    """
    where, params = _seq_range(first, last)
    heads: list[Sequence[Any]] = list(
        await conn.execute_fetchall(
            f"SELECT {_HEAD_COLUMNS} FROM messages m WHERE m.session_id = ? AND {where}"
            " ORDER BY m.seq LIMIT ?",
            (session_id, *params, limit),
        )
    )
    if not heads:
        return [], []
    where, params = _seq_range(first, heads[-1][7])
    part_rows: list[Sequence[Any]] = list(
        await conn.execute_fetchall(
            "SELECT m.seq, p.data FROM messages m JOIN parts p ON p.message_id = m.id"
            f" WHERE m.session_id = ? AND {where} ORDER BY m.seq, p.idx",
            (session_id, *params),
        )
    )
    return heads, part_rows


async def _read_history(
    conn: aiosqlite.Connection,
    session_id: str,
    since_message_id: str | None,
    *,
    use_runs: bool = True,
) -> tuple[list[Message], list[Message]] | None:
    """The session's messages in order (from since_message_id on) and those of them holding an
    unfinished tool call; None when since_message_id is not a message of the session.

    Runs of packed messages (store/packed.py) are unpacked; the messages no run holds are read
    from their rows. Raises PackError when a run cannot be unpacked.
    """
    first = 1  # a message's seq (1, 2, ...)
    if since_message_id is not None:
        since = await _message_seq(conn, session_id, since_message_id)
        if since is None:
            return None
        first = since
    runs = (
        list(
            await conn.execute_fetchall(
                "SELECT first_seq, last_seq, count, data FROM packed_messages"
                " WHERE session_id = ? AND first_seq >= ? ORDER BY first_seq",
                (session_id, first),
            )
        )
        if use_runs
        else []
    )
    # (first seq, messages) for each run and each stretch between them read from the rows.
    segments: list[tuple[int, list[Message]]] = []
    unfinished: list[Message] = []
    gaps: list[tuple[int, int | None]] = []
    for run_first, run_last, count, data in runs:
        if first < run_first:
            gaps.append((first, run_first - 1))
        segments.append((run_first, packed.unpack(data, session_id, run_first, run_last, count)))
        first = run_last + 1
    gaps.append((first, None))
    for gap_first, gap_last in gaps:
        heads, part_rows = await _read_rows(conn, session_id, gap_first, gap_last)
        if heads:
            messages, live = _build_messages(session_id, heads, part_rows)
            segments.append((int(heads[0][7]), messages))
            unfinished += live
    if len(segments) == 1:
        return segments[0][1], unfinished
    segments.sort(key=lambda segment: segment[0])
    return [message for _, messages in segments for message in messages], unfinished


async def _message_seq(conn: aiosqlite.Connection, session_id: str, message_id: str) -> int | None:
    """The seq of the message in the session; None when it is not one of the session's."""
    rows = list(
        await conn.execute_fetchall(
            "SELECT seq FROM messages WHERE id = ? AND session_id = ?", (message_id, session_id)
        )
    )
    return int(rows[0][0]) if rows else None


def _build_messages(
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
            _message(
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


def _message(value: dict[str, Any], fields_set: set[str] | None = None) -> Message:
    """A message from the column values of its row (its parts and usage already validated).

    Built the way Message.model_construct builds a model (no validation: the row is ours,
    written from a validated message, and its parts and usage were validated above), once each
    value has the type validation would insist on; model_construct itself, a Python loop over
    the fields, costs more than validating. A row failing that check is validated, so a corrupt
    one raises pydantic's ValidationError, as it always did, with a note naming the message.
    tests/store/test_load.py checks that a message built so equals the validated one. Messages
    built from one load share fields_set (every field, see _build_messages).
    """
    finish_reason = value["finish_reason"]
    error = value["error"]
    if (
        _CONSTRUCT_OK
        and type(value["id"]) is str
        and value["role"] in _ROLES
        and type(value["created_at"]) is int
        and (finish_reason is None or finish_reason in _FINISH_REASONS)
        and (error is None or type(error) is str)
    ):
        message: Message = packed.construct(
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
