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

    async def load_todos(self, session_id: str) -> list[TodoItem]:
        rows = await self._fetchall("SELECT todos FROM sessions WHERE id = ?", (session_id,))
        return todos_from_json(rows[0][0]) if rows else []
