"""Managing stored sessions: search by title and message text (an SQLite FTS5 index of the
text parts, migration 9, kept in sync by triggers on parts) and fork at a message. Store
inherits these (SessionAdmin), so repository.py stays one concern; rename is update_session's
title and delete is delete_session."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from agentls.history import clean_text, new_id, now_ms
from agentls.store import session_locks
from agentls.store.rows import SESSION_COLUMNS, SessionRecord, session_from_row

T = TypeVar("T")

# Migration 9's statements (store/schema.py MIGRATIONS): never edit them, append a new migration.
# message_text's rowid is the text part's rowid in parts; a part's text is indexed as it is
# written (a streamed part is rewritten in place: the update trigger re-indexes it), and a
# deleted part (or its message's or session's, by cascade) leaves the index with it. A row
# that is not JSON (damaged) is left out rather than failing the write.
MIGRATION = (
    "CREATE VIRTUAL TABLE message_text USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2')",
    "INSERT INTO message_text (rowid, text)"
    " SELECT rowid, json_extract(data, '$.text') FROM parts"
    " WHERE type = 'text' AND json_valid(data)",
    "CREATE TRIGGER parts_text_insert AFTER INSERT ON parts"
    " WHEN NEW.type = 'text' AND json_valid(NEW.data) BEGIN"
    " INSERT INTO message_text (rowid, text) VALUES (NEW.rowid, json_extract(NEW.data, '$.text'));"
    " END",
    "CREATE TRIGGER parts_text_delete AFTER DELETE ON parts WHEN OLD.type = 'text' BEGIN"
    " DELETE FROM message_text WHERE rowid = OLD.rowid; END",
    "CREATE TRIGGER parts_text_update AFTER UPDATE OF type, data ON parts BEGIN"
    " DELETE FROM message_text WHERE rowid = OLD.rowid;"
    " INSERT INTO message_text (rowid, text) SELECT NEW.rowid, json_extract(NEW.data, '$.text')"
    " WHERE NEW.type = 'text' AND json_valid(NEW.data); END",
)


def fts_query(query: str) -> str | None:
    """The user's words as an FTS5 query: every word must occur, as a word or a word's start
    (`pars` finds `parser`); quoted, so no word is read as FTS5 syntax. None: no words."""
    words = query.replace("\x00", " ").split()  # FTS5 ends a string at a NUL: an error
    if not words:
        return None
    return " ".join('"' + word.replace('"', '""') + '"*' for word in words)


def _like(query: str) -> str:
    escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class SessionAdmin:
    """Search, delete and fork of Store (which defines _fetchall and _write)."""

    path: Path

    async def _fetchall(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        raise NotImplementedError  # Store's

    async def _write(self, body: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        raise NotImplementedError  # Store's

    async def search_sessions(
        self, query: str, limit: int = 1000, cwd: str | None = None
    ) -> list[SessionRecord]:
        """The sessions whose title holds `query` or whose messages' text holds all its words,
        most recently updated first (of one working directory when cwd is given)."""
        match = fts_query(query)
        if match is None:
            return []
        rows = await self._fetchall(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE (? IS NULL OR cwd = ?)"
            " AND (title LIKE ? ESCAPE '\\' OR id IN (SELECT m.session_id FROM message_text f"
            " JOIN parts p ON p.rowid = f.rowid JOIN messages m ON m.id = p.message_id"
            " WHERE message_text MATCH ?))"
            " ORDER BY updated_at DESC, id DESC LIMIT ?",
            (cwd, cwd, _like(query.strip()), match, limit),
        )
        return [session_from_row(row) for row in rows]

    async def delete_session_tree(self, session_id: str) -> list[str]:
        """Delete the session and its sub-agents' sessions (parent_id, at any depth), each with
        everything of it (messages, parts, their search index, grants, file changes, lock: ON
        DELETE CASCADE). The ids deleted; [] when the session is unknown. SessionLockedError
        (nothing deleted) while another live process runs a turn of one of them."""

        async def body(conn: aiosqlite.Connection) -> list[str]:
            tree = [
                str(row[0])
                for row in await conn.execute_fetchall(
                    "WITH RECURSIVE tree (id) AS (SELECT id FROM sessions WHERE id = ?"
                    " UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id)"
                    " SELECT id FROM tree",
                    (session_id,),
                )
            ]
            for sid in tree:
                holder = await session_locks.holder_of(conn, sid)
                if holder is not None and session_locks.is_alive(holder):
                    raise session_locks.SessionLockedError(sid, holder, self.path)
            await conn.executemany("DELETE FROM sessions WHERE id = ?", [(i,) for i in tree])
            return tree

        return await self._write(body)

    async def fork_session(
        self, session_id: str, message_id: str, title: str | None = None
    ) -> SessionRecord:
        """A new session (same working directory, model and mode) holding copies of the
        session's messages up to and including message_id, with their parts. KeyError when
        the session or the message (in that session) is unknown."""

        async def body(conn: aiosqlite.Connection) -> SessionRecord:
            found = list(
                await conn.execute_fetchall(
                    f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
                )
            )
            if not found:
                raise KeyError(f"unknown sessionId {session_id!r}")
            source = session_from_row(found[0])
            at = list(
                await conn.execute_fetchall(
                    "SELECT seq FROM messages WHERE id = ? AND session_id = ?",
                    (message_id, session_id),
                )
            )
            if not at:
                raise KeyError(f"message {message_id!r} is not in session {session_id!r}")
            now = now_ms()
            record = SessionRecord(
                id=new_id("ses"),
                title=clean_text(title) if title else f"Fork of {source.title}",
                cwd=source.cwd,
                model=source.model,
                created_at=now,
                updated_at=now,
                mode=source.mode,
            )
            await conn.execute(
                "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at, mode)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (record.id, record.title, record.cwd, record.model, now, now, record.mode),
            )
            olds = [
                str(row[0])
                for row in await conn.execute_fetchall(
                    "SELECT id FROM messages WHERE session_id = ? AND seq <= ? ORDER BY seq",
                    (session_id, at[0][0]),
                )
            ]
            ids = {old: new_id("msg") for old in olds}
            for old, new in ids.items():
                await conn.execute(
                    "INSERT INTO messages (id, session_id, seq, role, created_at, finish_reason,"
                    " usage, error, reverted) SELECT ?, ?, seq, role, created_at, finish_reason,"
                    " usage, error, reverted FROM messages WHERE id = ?",
                    (new, record.id, old),
                )
                parts = await conn.execute_fetchall(
                    "SELECT idx, type, data FROM parts WHERE message_id = ? ORDER BY idx", (old,)
                )
                await conn.executemany(
                    "INSERT INTO parts (message_id, idx, type, data) VALUES (?, ?, ?, ?)",
                    [(new, idx, kind, _remap(kind, data, ids)) for idx, kind, data in parts],
                )
            summary = ids.get(source.summary_message_id or "")
            if summary is not None:
                record.summary_message_id = summary
                await conn.execute(
                    "UPDATE sessions SET summary_message_id = ? WHERE id = ?", (summary, record.id)
                )
            return record

        return await self._write(body)


def _remap(kind: str, data: str, ids: dict[str, str]) -> str:
    """A copied part's data: a summary's last_message_id names the copy of that message."""
    if kind != "summary":
        return data
    value = json.loads(data)
    last = value.get("last_message_id")
    if isinstance(last, str):
        value["last_message_id"] = ids.get(last)
    return json.dumps(value, ensure_ascii=False)
