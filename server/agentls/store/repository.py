"""The store's repository: one connection to the database (through aiosqlite) and every read
and write of sessions, messages and their parts, permission grants, file changes and session
locks. Rows become models in store/rows.py; the schema is store/schema.py."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import aiosqlite

from agentls.history import Message, Part, Usage, new_id, now_ms, repair_interrupted
from agentls.store import errors, session_locks
from agentls.store.checkpoints import Checkpoints
from agentls.store.errors import BUSY_TIMEOUT_MS
from agentls.store.review_state import ReviewState
from agentls.store.rows import (
    PROJECT_GRANT_COLUMNS,
    SESSION_COLUMNS,
    ProjectGrant,
    SessionRecord,
    StoredGrant,
    message_seq,
    part_json,
    project_grant_from_row,
    read_history,
    session_from_row,
    usage_json,
)
from agentls.store.schema import StoreVersionError, migrate, transaction
from agentls.store.session_admin import SessionAdmin
from agentls.store.session_meta import SessionMeta
from agentls.store.usage import SessionUsage
from agentls.store.usage import add_session_usage as add_session_usage_sql

log = logging.getLogger(__name__)

T = TypeVar("T")


def _consume_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class Store(SessionMeta, SessionAdmin, Checkpoints, ReviewState, SessionUsage):
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
            await migrate(conn)
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
        return await self._exclusive(lambda conn: transaction(conn, body, "BEGIN IMMEDIATE"))

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
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        )
        return session_from_row(rows[0]) if rows else None

    async def list_sessions(self, limit: int = 1000, cwd: str | None = None) -> list[SessionRecord]:
        """Most recently updated first, optionally only those of one working directory."""
        # id breaks ties, so sessions touched in the same millisecond keep a stable order.
        if cwd is None:
            rows = await self._fetchall(
                f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, id DESC LIMIT ?",
                (limit,),
            )
        else:
            rows = await self._fetchall(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE cwd = ?"
                " ORDER BY updated_at DESC, id DESC LIMIT ?",
                (cwd, limit),
            )
        return [session_from_row(row) for row in rows]

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
        await self._execute(*add_session_usage_sql(session_id, usage))

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
                    usage_json(message.usage),
                    message.error,
                    int(message.reverted),
                ),
            )
            if message.parts:
                await conn.executemany(
                    "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)",
                    [
                        (message.id, index, part.type, part_json(part))
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
                    usage_json(message.usage),
                    message.error,
                    int(message.reverted),
                    message.id,
                ),
            )
            if session_usage is not None:
                await conn.execute(*add_session_usage_sql(message.session_id, session_usage))

        await self._write(body)

    async def save_part(self, message_id: str, index: int, part: Part) -> None:
        """Insert the part at this index of the message, or replace the one there."""
        await self._execute(
            "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (message_id, idx) DO UPDATE SET type = excluded.type, data = excluded.data",
            (message_id, index, part.type, part_json(part)),
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
                    (message_id, index, part.type, part_json(part))
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
                seq = await message_seq(conn, session_id, before_message_id)
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
                    usage_json(summary.usage),
                    summary.error,
                    int(summary.reverted),
                ),
            )
            await conn.executemany(
                "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)",
                [
                    (summary.id, index, part.type, part_json(part))
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

        async def read(
            conn: aiosqlite.Connection,
        ) -> tuple[list[Message], list[tuple[Message, list[int]]]] | None:
            history = await read_history(conn, session_id, since_message_id)
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
            loaded = await transaction(conn, read, "BEGIN")
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
                updates = [(part_json(part), *locations[id(part)]) for part in changed]

                async def persist(conn: aiosqlite.Connection) -> None:
                    await conn.executemany(
                        "UPDATE parts SET data = ? WHERE message_id = ? AND idx = ?", updates
                    )

                # Still under the lock, so no newer state of these parts can have been saved
                # since the read.
                await transaction(conn, persist, "BEGIN IMMEDIATE")
            return messages

        return await self._exclusive(body)

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
            f"SELECT {PROJECT_GRANT_COLUMNS} FROM project_grants WHERE root = ? ORDER BY id",
            (root,),
        )
        return [project_grant_from_row(row) for row in rows]

    async def revoke_project_grant(self, root: str, number: int) -> ProjectGrant | None:
        """Delete the `number`-th (1-based, as list_project_grants orders them) grant of `root`
        and return it; None when there is no such grant."""

        async def body(conn: aiosqlite.Connection) -> ProjectGrant | None:
            if number < 1:
                return None
            rows = list(
                await conn.execute_fetchall(
                    f"SELECT {PROJECT_GRANT_COLUMNS} FROM project_grants"
                    " WHERE root = ? ORDER BY id LIMIT 1 OFFSET ?",
                    (root, number - 1),
                )
            )
            if not rows:
                return None
            grant = project_grant_from_row(rows[0])
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
