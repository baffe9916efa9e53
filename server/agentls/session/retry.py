"""Retry (agent/retry, `agentls run --retry`): a turn that ended with an error goes on from where it
failed. Its completed steps and their tool results are kept; the failed step's message (what it
streamed before the failure, with its error) stays in the history for the record, marked
reverted so that it is no longer sent; the model call is made again, with no new user message.

A retry is refused (NothingToRetry) when the session's last turn did not end with an error, or a
turn runs or waits, or the session is a sub-agent's (its parent's turn is the one to retry). Agent inherits `retry` (TurnRetry), so agent.py stays the loop's face.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentls.history import Attachment, Message
from agentls.session.heap import HEAP
from agentls.session.state import SessionState, TurnResult
from agentls.store import Store


class NothingToRetry(Exception):
    """The session has no failed turn to retry now; the message says why, for a person."""


def failed_message(state: SessionState) -> Message:
    """The assistant message the session's last turn failed on; NothingToRetry if there is none."""
    last = next((m for m in reversed(state.messages) if not m.reverted), None)
    if last is None or last.role != "assistant" or last.finish_reason != "error":
        raise NothingToRetry(
            "there is nothing to retry: the session's last turn did not end with an error"
        )
    return last


async def resume_failed(state: SessionState, store: Store) -> Message:
    """Make the session ready to go on from its failed step: the failed message (one that holds
    the failure: its error is set) is marked reverted; a completed step marked "error" only
    because the turn ended there is kept. Returns the turn's user message."""
    failed = failed_message(state)
    if failed.error is not None:
        failed.reverted = True
        await store.update_message(failed)
    user = next((m for m in reversed(state.messages) if m.role == "user" and not m.reverted), None)
    if user is None:
        raise NothingToRetry("there is nothing to retry: the session has no prompt")
    return user


class TurnRetry:
    """`retry` of Agent (which defines these)."""

    store: Store

    async def session(self, session_id: str) -> SessionState:
        raise NotImplementedError  # Agent's

    async def _run_turn(
        self, state: SessionState, text: str | None, context: Sequence[Attachment], *args: Any
    ) -> TurnResult:
        raise NotImplementedError  # Agent's

    async def retry(self, session_id: str) -> TurnResult:
        """Run the session's failed last turn again from the step that failed (see the module).
        KeyError if the session is unknown; NothingToRetry when there is nothing to retry or a
        turn runs or waits."""
        state = await self.session(session_id)
        if state.record.parent_id is not None:
            raise NothingToRetry(
                "this is a sub-agent's session: retry the turn of its parent session "
                f"{state.record.parent_id!r}"
            )
        if state.busy or state.queue or state.lock.locked():
            raise NothingToRetry("a turn is running in this session: wait for it or stop it first")
        failed_message(state)  # refused before anything is queued
        async with state.lock:
            failed_message(state)  # still so (nothing ran meanwhile: the lock was free)
            HEAP.freeze()  # before the turn's task and objects exist (see heap.py)
            state.task = asyncio.create_task(self._run_turn(state, None, []))
            return await state.task
