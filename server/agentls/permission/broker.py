"""The awaitable "ask": the loop waits on a future that a front end resolves, with a deadline.

A question is answered at most once. Answers to unknown, answered, expired or cancelled requests
are refused with a reason and never applied (see the event-coordination write-up in the seeds).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.history import new_id

Decision = Literal["once", "always", "reject"]
DECISIONS: tuple[str, ...] = ("once", "always", "reject")
# A front end's answer when no one can be asked (`agentls run` without a terminal): a refusal
# the model is told apart from a user's rejection.
UNATTENDED = "unattended"
# Where an "always" answer is kept: the session, or the project (every later session of the
# workspace root).
Scope = Literal["session", "project"]
SCOPES: tuple[str, ...] = ("session", "project")


@dataclass
class Answer:
    decision: Decision | Literal["timeout", "cancelled", "unattended"]
    # With "reject": the user's words to the model. With "once" to an ask_user question: the
    # user's answer.
    feedback: str | None = None
    scope: Scope = "session"
    # "once" with a change the user accepted instead of the proposal (part of it, or their own
    # version): each file's accepted text; a proposed file not in it stays as it was. None: the
    # proposal as it was.
    accepted: dict[Path, str] | None = None


class ApprovalError(Exception):
    """An answer that cannot be taken; the message says why."""


@dataclass
class _Pending:
    session_id: str
    future: asyncio.Future[Answer]


class ApprovalBroker:
    """Holds the open questions of every session, keyed by request id."""

    def __init__(self, timeout_s: float = 30 * 60) -> None:
        self.timeout_s = timeout_s
        self._pending: dict[str, _Pending] = {}
        # Closed questions remember how they closed, so a late answer gets a precise refusal.
        self._closed: dict[str, str] = {}

    def open(self, session_id: str) -> str:
        request_id = new_id("perm")
        loop = asyncio.get_running_loop()
        self._pending[request_id] = _Pending(session_id, loop.create_future())
        return request_id

    async def wait(self, request_id: str, timeout_s: float | None = None) -> Answer:
        pending = self._pending[request_id]
        try:
            answer = await asyncio.wait_for(
                asyncio.shield(pending.future),
                timeout=timeout_s if timeout_s is not None else self.timeout_s,
            )
            return answer
        except TimeoutError:
            self._close(request_id, "expired")
            return Answer("timeout", "No answer came before the approval timed out.")
        except asyncio.CancelledError:
            self._close(request_id, "cancelled")
            raise
        finally:
            if pending.future.done():
                self._close(request_id, "answered")

    def answer(
        self,
        session_id: str,
        request_id: str,
        decision: str,
        feedback: str | None = None,
        scope: str = "session",
        accepted: dict[Path, str] | None = None,
    ) -> None:
        if decision not in DECISIONS and decision != UNATTENDED:
            raise ApprovalError(f"decision must be one of once, always, reject (got {decision!r})")
        if scope not in SCOPES:
            raise ApprovalError(f"scope must be session or project (got {scope!r})")
        if accepted is not None and decision != "once":
            raise ApprovalError(f"an accepted change goes with decision once (got {decision!r})")
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            state = self._closed.get(request_id)
            if state is None:
                raise ApprovalError(f"unknown requestId {request_id!r}")
            raise ApprovalError(f"requestId {request_id!r} was already {state}")
        if pending.session_id != session_id:
            raise ApprovalError(
                f"requestId {request_id!r} does not belong to session {session_id!r}"
            )
        pending.future.set_result(
            Answer(decision, feedback, scope, accepted)  # type: ignore[arg-type]
        )
        # Stays in _pending until its waiter takes the answer (which may not have started yet).
        self._closed[request_id] = "answered"

    def _close(self, request_id: str, state: str) -> None:
        self._pending.pop(request_id, None)
        self._closed.setdefault(request_id, state)
        if len(self._closed) > 10_000:
            # Keep the memory of closed requests bounded in a long-lived server.
            for key in list(self._closed)[:5_000]:
                del self._closed[key]


AskHandler = Callable[[str], None]
