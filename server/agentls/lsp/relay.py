"""Core events to `agent/event` notifications: text deltas coalesced (about 60 a second per
session, nothing lost or reordered), and a work-done progress bar for each running turn."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from agentls.lsp.server import AgentServer

FLUSH_INTERVAL_S = 1 / 60


@dataclass
class _Pending:
    kind: str
    message_id: str | None
    chunks: list[str] = field(default_factory=list)
    handle: asyncio.TimerHandle | None = None


class EventRelay:
    def __init__(self, server: AgentServer) -> None:
        self.server = server
        self._pending: dict[str, _Pending] = {}
        self._last_flush: dict[str, float] = {}
        self._progress: dict[str, tuple[str, asyncio.Future[Any]]] = {}

    def __call__(self, event: Any) -> None:
        session_id = event.session_id
        kind = event.type
        if kind in ("text-delta", "thinking-delta"):
            pending = self._pending.get(session_id)
            if pending is not None and (
                pending.kind != kind or pending.message_id != event.message_id
            ):
                self.flush(session_id)
                pending = None
            if pending is None:
                pending = _Pending(kind, event.message_id)
                self._pending[session_id] = pending
            pending.chunks.append(event.delta)
            if pending.handle is None:
                wait = self._last_flush.get(session_id, 0.0) + FLUSH_INTERVAL_S - time.monotonic()
                loop = asyncio.get_running_loop()
                pending.handle = loop.call_later(max(wait, 0.0), self.flush, session_id)
            return
        # Anything else: first what was buffered, so the order is kept.
        self.flush(session_id)
        self.send(event.wire())
        self._progress_for(event)

    def flush(self, session_id: str) -> None:
        pending = self._pending.pop(session_id, None)
        if pending is None:
            return
        if pending.handle is not None:
            pending.handle.cancel()
        self._last_flush[session_id] = time.monotonic()
        payload: dict[str, Any] = {
            "sessionId": session_id,
            "type": pending.kind,
            "delta": "".join(pending.chunks),
        }
        if pending.message_id is not None:
            payload["messageId"] = pending.message_id
        self.send(payload)

    def send(self, payload: dict[str, Any]) -> None:
        self.server.protocol.notify("agent/event", payload)

    # ---- progress -----------------------------------------------------------------------

    def _progress_for(self, event: Any) -> None:
        if not self.server.client_caps.work_done_progress:
            return
        kind = event.type
        session_id = event.session_id
        if kind == "turn-start":
            token = f"agentls-{uuid.uuid4().hex}"
            title = " ".join(event.prompt.split())[:80] or "agentls"
            created: asyncio.Future[Any] = asyncio.ensure_future(self._begin(token, title))
            self._progress[session_id] = (token, created)
        elif (
            kind in ("tool-call", "permission-request", "turn-end") and session_id in self._progress
        ):
            token, created = self._progress[session_id]
            if kind == "turn-end":
                del self._progress[session_id]
                message = f"finished: {event.finish_reason}"
            elif kind == "tool-call":
                message = f"running {event.title}"
            else:
                message = f"waiting for approval: {event.title}"
            asyncio.ensure_future(self._report(token, created, message, end=kind == "turn-end"))

    async def _begin(self, token: str, title: str) -> bool:
        progress = self.server.work_done_progress
        try:
            await progress.create_async(token)
        except Exception:
            return False
        progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        return True

    async def _report(
        self, token: str, created: asyncio.Future[Any], message: str, end: bool
    ) -> None:
        try:
            ok = await created
        except Exception:
            return
        if not ok:
            return
        progress = self.server.work_done_progress
        if end:
            progress.end(token, types.WorkDoneProgressEnd(message=message))
        else:
            progress.report(token, types.WorkDoneProgressReport(message=message))
