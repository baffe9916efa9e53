"""The database's schema: its migrations (tables, indexes, triggers) and applying them.

Migration N (1-based) is MIGRATIONS[N - 1]; PRAGMA user_version records the last one applied.
Never edit a released migration: append a new one, since existing databases have already run it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiosqlite

from agentls.store import (
    checkpoints,
    review_state,
    session_admin,
    session_locks,
    session_meta,
    usage,
)
from agentls.store.errors import StoreError

T = TypeVar("T")


class StoreVersionError(StoreError):
    """The database was written by a newer agentls whose schema this one does not know."""


# Migration 3 made these triggers, migration 6 drops them (with their table).
_PACKED_TRIGGERS = tuple(
    f"{table}_{event}_unpacks"
    for table in ("messages", "parts")
    for event in ("insert", "update", "delete")
)

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
        # Runs of finished messages kept packed (marshal), read instead of their rows, and the
        # triggers that dropped a run when a row of its messages changed. Retired: migration 6
        # drops them.
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
        "CREATE TRIGGER messages_insert_unpacks AFTER INSERT ON messages BEGIN DELETE FROM"
        " packed_messages WHERE session_id = NEW.session_id AND first_seq <= NEW.seq"
        " AND last_seq >= NEW.seq; END",
        "CREATE TRIGGER messages_update_unpacks AFTER UPDATE ON messages BEGIN DELETE FROM"
        " packed_messages WHERE session_id = OLD.session_id AND first_seq <= OLD.seq"
        " AND last_seq >= OLD.seq; DELETE FROM packed_messages WHERE session_id = NEW.session_id"
        " AND first_seq <= NEW.seq AND last_seq >= NEW.seq; END",
        "CREATE TRIGGER messages_delete_unpacks AFTER DELETE ON messages BEGIN DELETE FROM"
        " packed_messages WHERE session_id = OLD.session_id AND first_seq <= OLD.seq"
        " AND last_seq >= OLD.seq; END",
        "CREATE TRIGGER parts_insert_unpacks AFTER INSERT ON parts BEGIN DELETE FROM"
        " packed_messages WHERE id IN (SELECT c.id FROM messages m JOIN packed_messages c"
        " ON c.session_id = m.session_id AND c.first_seq <= m.seq AND c.last_seq >= m.seq"
        " WHERE m.id IN (NEW.message_id)); END",
        "CREATE TRIGGER parts_update_unpacks AFTER UPDATE ON parts BEGIN DELETE FROM"
        " packed_messages WHERE id IN (SELECT c.id FROM messages m JOIN packed_messages c"
        " ON c.session_id = m.session_id AND c.first_seq <= m.seq AND c.last_seq >= m.seq"
        " WHERE m.id IN (OLD.message_id, NEW.message_id)); END",
        "CREATE TRIGGER parts_delete_unpacks AFTER DELETE ON parts BEGIN DELETE FROM"
        " packed_messages WHERE id IN (SELECT c.id FROM messages m JOIN packed_messages c"
        " ON c.session_id = m.session_id AND c.first_seq <= m.seq AND c.last_seq >= m.seq"
        " WHERE m.id IN (OLD.message_id)); END",
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
    (
        # Packed runs are retired: a session loads from its rows. The triggers go first (their
        # bodies name the table).
        *(f"DROP TRIGGER IF EXISTS {name}" for name in _PACKED_TRIGGERS),
        "DROP TABLE IF EXISTS packed_messages",
    ),
    # A session's mode and todo list (store/session_meta.py).
    session_meta.MIGRATION,
    # A sub-agent's session: its parent and agent type (store/session_meta.py).
    session_meta.PARENT_MIGRATION,
    # Search over message text: an FTS5 index of the text parts (store/session_admin.py).
    session_admin.MIGRATION,
    # The last revert of each session, for agent/unrevert (store/checkpoints.py).
    checkpoints.MIGRATION,
    # Review "after": the files pending review and their bases (store/review_state.py).
    review_state.MIGRATION,
    # The sub-agents' share of a session's totals, estimated totals (store/usage.py).
    usage.MIGRATION,
)
SCHEMA_VERSION = len(MIGRATIONS)


async def transaction(
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


async def migrate(conn: aiosqlite.Connection) -> None:
    """Apply the migrations the database has not run yet, all in one transaction; raises
    StoreVersionError for a database of a newer schema."""
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
    await transaction(conn, apply, "BEGIN IMMEDIATE")
