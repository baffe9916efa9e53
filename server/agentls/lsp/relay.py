"""Core events to `agent/event` notifications, in the order they happen, and a work-done progress
bar for each running turn. Text deltas arrive already batched by the turn: one notification each."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.progress import Progress

Notify = Callable[[dict[str, Any]], None]
ProgressFor = Callable[[], "Progress | None"]


class EventRelay:
    """An event sink of the Agent: `notify` sends one agent/event payload; `progress` gives the
    client's work-done progress, or None when it does not show any."""

    def __init__(self, notify: Notify, progress: ProgressFor) -> None:
        self.notify = notify
        self.progress = progress
        self._progress: dict[str, tuple[str, asyncio.Future[Any]]] = {}

    def __call__(self, event: Any) -> None:
        self.notify(event.wire())
        self._progress_for(event)

    # ---- progress -----------------------------------------------------------------------

    def _progress_for(self, event: Any) -> None:
        progress = self.progress()
        if progress is None:
            return
        kind = event.type
        session_id = event.session_id
        if kind == "turn-start":
            token = f"agentls-{uuid.uuid4().hex}"
            title = " ".join(event.prompt.split())[:80] or "agentls"
            created: asyncio.Future[Any] = asyncio.ensure_future(
                self._begin(progress, token, title)
            )
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
            asyncio.ensure_future(
                self._report(progress, token, created, message, end=kind == "turn-end")
            )

    async def _begin(self, progress: Progress, token: str, title: str) -> bool:
        try:
            await progress.create_async(token)
        except Exception:
            return False
        progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        return True

    async def _report(
        self,
        progress: Progress,
        token: str,
        created: asyncio.Future[Any],
        message: str,
        end: bool,
    ) -> None:
        try:
            ok = await created
        except Exception:
            return
        if not ok:
            return
        if end:
            progress.end(token, types.WorkDoneProgressEnd(message=message))
        else:
            progress.report(token, types.WorkDoneProgressReport(message=message))
