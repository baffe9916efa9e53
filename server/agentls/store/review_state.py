"""Review "after" (the `review` setting): the files the agent changed that the user has not yet
kept or undone, each with the text the user last kept (its base). The pending change of a file is
base -> the agent's latest text, which is the `after` of the session's last file_changes row for
the path not reverted (the agent's writes, and what an undo wrote, are recorded there). Store
inherits these reads and writes (ReviewState)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentls.history import now_ms

# Migration 11 (store/schema.py MIGRATIONS): never edit it, append a new migration.
MIGRATION = (
    """
    CREATE TABLE review_pending (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        -- The text the user last kept; NULL: the file did not exist (the agent created it).
        base TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, path)
    )
    """,
)


class ReviewState:
    """Store's reads and writes of review_pending (Store defines _execute and _fetchall)."""

    async def _execute(self, sql: str, params: Sequence[Any]) -> None:
        raise NotImplementedError  # Store's

    async def _fetchall(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        raise NotImplementedError  # Store's

    async def add_review_pending(self, session_id: str, path: str, base: str | None) -> None:
        """Track `path` as pending review from `base` (the text before the agent's change; None:
        it created the file). A path already pending keeps its first base."""
        await self._execute(
            "INSERT OR IGNORE INTO review_pending (session_id, path, base, created_at)"
            " VALUES (?, ?, ?, ?)",
            (session_id, path, base, now_ms()),
        )

    async def list_review_pending(self, session_id: str) -> list[tuple[str, str | None, str]]:
        """(path, base, the agent's latest text) of each file pending review, in the order they
        were first changed. Changes of reverted messages (agent/revert) do not count: a path with
        no other recorded change of the session is left out."""
        rows = await self._fetchall(
            "SELECT r.path, r.base, (SELECT f.after FROM file_changes f"
            "  WHERE f.session_id = r.session_id AND f.path = r.path AND NOT EXISTS"
            "   (SELECT 1 FROM messages m WHERE m.id = f.message_id AND m.reverted = 1)"
            "  ORDER BY f.id DESC LIMIT 1)"
            " FROM review_pending r WHERE r.session_id = ? ORDER BY r.created_at, r.rowid",
            (session_id,),
        )
        return [(row[0], row[1], row[2]) for row in rows if row[2] is not None]

    async def set_review_base(self, session_id: str, path: str, base: str | None) -> None:
        """The user kept part of the change: what they have kept so far becomes the base."""
        await self._execute(
            "UPDATE review_pending SET base = ? WHERE session_id = ? AND path = ?",
            (base, session_id, path),
        )

    async def drop_review_pending(self, session_id: str, path: str) -> None:
        """Nothing of `path` is pending any more (kept or undone as a whole)."""
        await self._execute(
            "DELETE FROM review_pending WHERE session_id = ? AND path = ?", (session_id, path)
        )
