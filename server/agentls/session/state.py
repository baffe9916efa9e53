"""A session in memory: its record, history, grants and queue of prompts, and a turn's result."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agentls.events import TodoItem
from agentls.history import ApiHistory, Attachment, FinishReason, Message, Usage
from agentls.model.failures import TurnFailure
from agentls.permission.rules import Rule
from agentls.store import SessionRecord
from agentls.tools.base import ReadLedger


@dataclass
class TurnResult:
    session_id: str
    message_id: str | None
    finish_reason: FinishReason
    text: str
    usage: Usage
    error: str | None = None  # what failed, as the exception said it (the details)
    # The failure in words for a person (model/failures.py): a failed turn's.
    failure: TurnFailure | None = None

    def wire(self) -> dict[str, Any]:
        """The result line `agentls run --json` ends with (a background run's log ends with it
        too: session/background.py reads it)."""
        line: dict[str, Any] = {
            "type": "result",
            "sessionId": self.session_id,
            "messageId": self.message_id,
            "finishReason": self.finish_reason,
            "text": self.text,
            "usage": self.usage.wire(),
        }
        if self.failure:  # what its error event said (kind, message, nextStep, ...)
            f = self.failure
            line["error"] = {
                "kind": f.kind,
                "message": f.message,
                "nextStep": f.next_step,
                "retryable": f.retryable,
                "details": f.details,
            }
        return line


class SessionBusyError(Exception):
    """The session is running a turn; the operation needs it idle."""


@dataclass(eq=False)
class Ticket:
    """A prompt's place in its session's queue."""

    cancelled: bool = False


@dataclass(eq=False)
class Steer:
    """A prompt sent with mode "steer" while a turn runs: the turn adds it at its next step
    boundary (turn.py take_steers) and marks it taken."""

    text: str
    context: list[Attachment]
    taken: bool = False


@dataclass
class SessionState:
    record: SessionRecord
    messages: list[Message]
    # The API form of `messages`, kept between steps: each step converts only what is new.
    api: ApiHistory = field(default_factory=ApiHistory)
    ledger: ReadLedger = field(default_factory=ReadLedger)
    grants: list[Rule] = field(default_factory=list)
    # What the skills loaded in a turn allow (session/skill_use.py): that turn's task, its rules.
    skill_grants: tuple[object, list[Rule]] = (None, [])
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    queue: list[Ticket] = field(default_factory=list)
    task: asyncio.Task[TurnResult] | None = None
    # The running turn was cancelled and is storing what it had (finish_cancelled): another
    # cancel must not interrupt that.
    finishing: bool = False
    # Operations using the state outside a turn (a revert): it stays loaded while they run.
    users: int = 0
    # The todo list (todowrite), as stored; steers waiting for the running turn's next step.
    todos: list[TodoItem] = field(default_factory=list)
    steers: list[Steer] = field(default_factory=list)

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def idle(self) -> bool:
        """Nothing running, waiting or holding it: it may be dropped from memory (see
        Agent.keep_idle_sessions) and loaded again from the store when next used."""
        return not self.busy and not self.queue and not self.lock.locked() and self.users == 0
