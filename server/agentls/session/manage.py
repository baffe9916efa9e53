"""Managing sessions through the Agent: rename, delete (with its sub-agents' sessions), fork at
a message, export as Markdown (export.py), search by title and message text (the store's FTS5 index, store/session_admin.py).
Also the model providers made anew after a key changed (agent/setApiKey). Agent inherits these
(SessionManagement), so agent.py stays the loop's face."""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

from agentls.history import clean_text
from agentls.model.base import Provider
from agentls.session.export import session_markdown
from agentls.session.hooks import end_sessions
from agentls.session.policy import Policy
from agentls.session.state import SessionBusyError, SessionState
from agentls.store import SessionRecord, Store


class SessionManagement:
    """Rename, delete, fork and search of Agent (which sets these attributes)."""

    store: Store
    policy: Policy
    root: Path
    _sessions: OrderedDict[str, SessionState]
    _providers: dict[str, Provider]
    _retired_providers: list[Provider]

    def emit(self, event: Any) -> None:
        raise NotImplementedError  # Agent's

    async def end_hooks(self, states: list[SessionState]) -> None:
        """The SessionEnd hooks of the sessions that ran a turn here, as the Agent closes."""
        await end_sessions(self.policy, self.root, states, self.store, self.emit)

    def renew_providers(self) -> None:
        """The next model call makes its provider anew (new settings, or a key changed:
        agent/setApiKey); the old ones close with the Agent."""
        self._retired_providers.extend(self._providers.values())
        self._providers.clear()

    def is_busy(self, session_id: str) -> bool:
        raise NotImplementedError  # Agent's

    async def _record(self, session_id: str) -> SessionRecord:
        record = await self.store.get_session(session_id)
        if record is None:
            raise KeyError(f"unknown sessionId {session_id!r}")
        return record

    async def rename_session(self, session_id: str, title: str) -> str:
        """Give the session this title (cleaned; not empty: ValueError); the title kept.
        KeyError if unknown."""
        await self._record(session_id)
        cleaned = clean_text(title).strip()
        if not cleaned:
            raise ValueError("title must not be empty")
        await self.store.update_session(session_id, title=cleaned)
        state = self._sessions.get(session_id)
        if state is not None:
            state.record.title = cleaned
        return cleaned

    async def delete_session(self, session_id: str) -> list[str]:
        """Delete the session from the store with everything of it, and its sub-agents'
        sessions; the ids deleted. KeyError if unknown; SessionBusyError while a turn runs in
        it (cancel it first)."""
        await self._record(session_id)
        if self.is_busy(session_id):
            raise SessionBusyError(f"session {session_id!r} is running a turn; cancel it first")
        deleted = await self.store.delete_session_tree(session_id)
        for sid in deleted:
            state = self._sessions.pop(sid, None)
            if state is not None:
                state.task = None
        return deleted

    async def fork_session(
        self, session_id: str, message_id: str, title: str | None = None
    ) -> SessionRecord:
        """A new session with the history up to and including message_id (its parts copied).
        KeyError if the session or the message is unknown."""
        await self._record(session_id)
        return await self.store.fork_session(session_id, message_id, title)

    async def export_markdown(self, session_id: str) -> str:
        """The whole session (from its first message, also before a compaction) as Markdown.
        Read only: a turn running here or in another process is shown as it stands."""
        record = await self._record(session_id)
        messages = await self.store.load_messages(session_id, repair=False)
        return session_markdown(record, messages)

    async def search_sessions(
        self, query: str, limit: int = 1000, cwd: Path | str | None = None
    ) -> list[SessionRecord]:
        """The sessions whose title holds query or whose messages' text holds all its words,
        newest first; of the workspace `cwd` only when given. A query of no words: them all."""
        where = None if cwd is None else os.path.realpath(cwd)
        if not query.split():
            return await self.store.list_sessions(limit=limit, cwd=where)
        return await self.store.search_sessions(query, limit=limit, cwd=where)
