"""What a session keeps besides its messages: its mode (build or plan) and its todo list (the
todowrite tool's), two columns of the sessions table (migration 7), and a sub-agent's parent
session and agent type (migration 8). Store inherits these reads
and writes (SessionMeta), so repository.py stays one concern."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agentls.events import SessionMode, TodoItem

# Migration 7's statements (store/schema.py MIGRATIONS): never edit them, append a new migration.
MIGRATION = (
    "ALTER TABLE sessions ADD COLUMN mode TEXT NOT NULL DEFAULT 'build'",
    # The todo list as JSON ([{content, status, priority?}]); NULL: none written yet.
    "ALTER TABLE sessions ADD COLUMN todos TEXT",
)
# Migration 8: a sub-agent's session (the task tool's, session/subagents.py) names its parent
# session and its agent type; NULL for a session of its own.
PARENT_MIGRATION = (
    "ALTER TABLE sessions ADD COLUMN parent_id TEXT",
    "ALTER TABLE sessions ADD COLUMN agent TEXT",
    "CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL",
)

_TODOS = TypeAdapter(list[TodoItem])
# The length of a session's preview line (previews()).
PREVIEW_CHARS = 140


def todos_from_json(raw: str | None) -> list[TodoItem]:
    """The stored list; a row no agentls wrote (not that shape) reads as no list."""
    if not raw:
        return []
    try:
        return _TODOS.validate_json(raw)
    except ValidationError:
        return []


class SessionMeta:
    """The mode and todo reads and writes of Store (which defines _execute and _fetchall)."""

    async def _execute(self, sql: str, params: Sequence[Any]) -> None:
        raise NotImplementedError  # Store's

    async def _fetchall(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        raise NotImplementedError  # Store's

    async def set_mode(self, session_id: str, mode: SessionMode) -> None:
        await self._execute("UPDATE sessions SET mode = ? WHERE id = ?", (mode, session_id))

    async def save_todos(self, session_id: str, todos: Sequence[TodoItem]) -> None:
        data = json.dumps([t.model_dump(exclude_none=True) for t in todos], ensure_ascii=False)
        await self._execute("UPDATE sessions SET todos = ? WHERE id = ?", (data, session_id))

    async def set_parent(self, session_id: str, parent_id: str, agent: str) -> None:
        """Mark the session a sub-agent's: its parent session and its agent type."""
        await self._execute(
            "UPDATE sessions SET parent_id = ?, agent = ? WHERE id = ?",
            (parent_id, agent, session_id),
        )

    async def previews(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Each session's last answer, as one line of at most PREVIEW_CHARS (the text of its latest
        assistant message not undone); sessions without one are left out. The panel's history."""
        found: dict[str, str] = {}
        ids = list(session_ids)
        for start in range(0, len(ids), 500):  # SQLite's limit on parameters
            chunk = ids[start : start + 500]
            rows = await self._fetchall(
                "SELECT s.id, (SELECT json_extract(p.data, '$.text') FROM messages m"
                " JOIN parts p ON p.message_id = m.id WHERE m.session_id = s.id"
                " AND m.role = 'assistant' AND m.reverted = 0 AND p.type = 'text'"
                " ORDER BY m.seq DESC, p.idx DESC LIMIT 1)"
                f" FROM sessions s WHERE s.id IN ({', '.join('?' * len(chunk))})",
                chunk,
            )
            for session_id, text in rows:
                line = " ".join(str(text or "").split())
                if line:
                    cut = len(line) > PREVIEW_CHARS
                    found[session_id] = line[: PREVIEW_CHARS - 1] + "…" if cut else line
        return found

    async def load_todos(self, session_id: str) -> list[TodoItem]:
        rows = await self._fetchall("SELECT todos FROM sessions WHERE id = ?", (session_id,))
        return todos_from_json(rows[0][0]) if rows else []
