"""The session's last revert (agent/revert), kept so agent/unrevert can redo it: which messages it
dropped and which files it restored, with the agent's version of each to put back. One row per
session; a new revert replaces it, a prompt sent after it clears it. Store inherits these reads
and writes (Checkpoints)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from agentls.history import now_ms

# Migration 10 (store/schema.py MIGRATIONS): never edit it, append a new migration.
MIGRATION = (
    """
    CREATE TABLE reverts (
        session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        message_id TEXT NOT NULL,
        scope TEXT NOT NULL,
        -- JSON: the ids of the messages it marked reverted, oldest first.
        message_ids TEXT NOT NULL,
        -- JSON: [{path, agent}], each file it restored and the agent's text to put back
        -- (agent null: the agent had deleted it).
        files TEXT NOT NULL,
        created_at INTEGER NOT NULL
    )
    """,
)


@dataclass(frozen=True)
class RestoredFile:
    """A file a revert restored: the text it put back (`before`, None: it deleted the file) and
    the agent's text it replaced (`agent`, None: the agent had deleted it), which a redo puts
    back while the file is still `before`."""

    path: str
    before: str | None
    agent: str | None


@dataclass(frozen=True)
class RevertRecord:
    """The session's last revert: the user message it went back to, its scope, the messages it
    marked reverted (oldest first) and the files it restored."""

    message_id: str
    scope: str
    message_ids: list[str]
    files: list[RestoredFile]
    created_at: int


class Checkpoints:
    """Store's reads and writes of the reverts table (Store defines _execute and _fetchall). The
    files column holds [{path, before, agent}] (`before` beside the migration's path and agent:
    what the revert wrote, so a redo knows whether the file changed since)."""

    async def _execute(self, sql: str, params: Sequence[Any]) -> None:
        raise NotImplementedError  # Store's

    async def _fetchall(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        raise NotImplementedError  # Store's

    async def save_revert(
        self,
        session_id: str,
        message_id: str,
        scope: str,
        message_ids: Sequence[str],
        files: Sequence[RestoredFile],
    ) -> None:
        """Keep this revert as the session's last one (replacing the one before)."""
        data = json.dumps([asdict(f) for f in files], ensure_ascii=False)
        await self._execute(
            "INSERT INTO reverts (session_id, message_id, scope, message_ids, files, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
            " message_id = excluded.message_id, scope = excluded.scope,"
            " message_ids = excluded.message_ids, files = excluded.files,"
            " created_at = excluded.created_at",
            (session_id, message_id, scope, json.dumps(list(message_ids)), data, now_ms()),
        )

    async def last_revert(self, session_id: str) -> RevertRecord | None:
        """The session's last revert, while no prompt was sent since (None: nothing to redo)."""
        rows = await self._fetchall(
            "SELECT message_id, scope, message_ids, files, created_at FROM reverts"
            " WHERE session_id = ?",
            (session_id,),
        )
        if not rows:
            return None
        message_id, scope, message_ids, files, created_at = rows[0]
        return RevertRecord(
            message_id=str(message_id),
            scope=str(scope),
            message_ids=[str(m) for m in json.loads(message_ids)],
            files=[
                RestoredFile(path=str(f["path"]), before=f.get("before"), agent=f.get("agent"))
                for f in json.loads(files)
            ],
            created_at=int(created_at),
        )

    async def clear_revert(self, session_id: str) -> bool:
        """Forget the session's last revert (a prompt was sent: there is nothing to redo);
        whether there was one (then its history may have changed since it was loaded)."""
        rows = await self._fetchall("SELECT 1 FROM reverts WHERE session_id = ?", (session_id,))
        if rows:
            await self._execute("DELETE FROM reverts WHERE session_id = ?", (session_id,))
        return bool(rows)

    async def sub_sessions(self, session_id: str, since_ms: int) -> list[str]:
        """The sub-agents' sessions (the task tool's, at any depth) the session started at or
        after since_ms, oldest first: their file changes are part of a revert to then."""
        rows = await self._fetchall(
            "WITH RECURSIVE tree(id, created_at) AS ("
            " SELECT id, created_at FROM sessions WHERE parent_id = ? AND created_at >= ?"
            " UNION SELECT s.id, s.created_at FROM sessions s JOIN tree t ON s.parent_id = t.id)"
            " SELECT id FROM tree ORDER BY created_at, id",
            (session_id, since_ms),
        )
        return [str(row[0]) for row in rows]

    async def range_file_changes(
        self, session_id: str, message_ids: Sequence[str], sub_sessions: Sequence[str]
    ) -> list[tuple[str, str | None, str]]:
        """(path, before, after) of the changes those messages of the session made and of every
        change of those sub-agents' sessions, oldest first."""
        if not message_ids and not sub_sessions:
            return []
        messages = ",".join("?" for _ in message_ids)
        subs = ",".join("?" for _ in sub_sessions)
        rows = await self._fetchall(
            "SELECT path, before, after FROM file_changes"
            f" WHERE (session_id = ? AND message_id IN ({messages})) OR session_id IN ({subs})"
            " ORDER BY id",
            (session_id, *message_ids, *sub_sessions),
        )
        return [(str(row[0]), row[1], str(row[2])) for row in rows]

    async def set_summary_message(self, session_id: str, message_id: str | None) -> None:
        """Point the session at the compaction summary its history starts from (None: it starts
        at its first message), after a revert dropped or an unrevert brought back a summary."""
        await self._execute(
            "UPDATE sessions SET summary_message_id = ? WHERE id = ?", (message_id, session_id)
        )
