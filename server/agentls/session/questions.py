"""Permission questions: what a tool call asks, and the one ask path every front end shares.

A tool call that a rule says to ask about becomes an AskContext; the Agent's asker decides it.
The asker of every front end is `ask_through_broker`: a question opened in the ApprovalBroker, a
permission-request event, the front end's QuestionPresenter showing it (a panel, a message, the
terminal) until Agent.approve answers it (or it expires, or the turn is cancelled), then a
permission-resolved event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal

from agentls.events import PermissionRequestEvent, PermissionResolvedEvent, ProposedFileChange
from agentls.permission.broker import Answer, ApprovalBroker, Decision
from agentls.tools.base import PermissionQuery

EventSink = Callable[[Any], None]


@dataclass
class AskContext:
    session_id: str
    call_id: str
    query: PermissionQuery
    # What "always" would allow, in the words to show (the grant's label); None: "always" is
    # not offered for this call, and an "always" answer counts as "once".
    always: str | None = None
    # A sub-agent's question (session_id is its child session): the task call's session and id,
    # and the agent type, so the front end shows whose question it is.
    parent_session_id: str | None = None
    parent_call_id: str | None = None
    agent: str | None = None

    def origin(self) -> dict[str, Any]:
        """The sub-agent fields of the events this question makes (none for a session's own)."""
        if self.parent_session_id is None:
            return {}
        return {
            "parent_session_id": self.parent_session_id,
            "parent_call_id": self.parent_call_id,
            "agent": self.agent,
        }


# Decides an "ask": returns once / always / reject (with feedback). Agent.ask (the broker path)
# is the one every front end uses; tests may supply their own.
Asker = Callable[[AskContext], Awaitable[Answer]]


@dataclass
class Question:
    """A permission question as a front end shows it; answered with Agent.approve(session_id,
    request_id, ...)."""

    session_id: str
    request_id: str
    call_id: str
    query: PermissionQuery
    # What "always" would allow (the grant's label); None: "always" is not offered.
    always: str | None = None
    # The edit in the front end's own wire form (an LSP WorkspaceEdit), set by its presenter:
    # the permission-request event carries it.
    edit: dict[str, Any] | None = None
    # A sub-agent's question: the session and the task call it runs for (session_id and
    # call_id are the sub-agent's own; approve() takes its session_id), and its agent type.
    parent_session_id: str | None = None
    parent_call_id: str | None = None
    agent: str | None = None


# How a front end shows a question while the ask waits for its answer: entered before the
# permission-request event is emitted (it may set question.edit), left once the question is
# answered, expired or cancelled (it stops showing it then).
QuestionPresenter = Callable[[Question], AbstractContextManager[None]]


def _changes(query: PermissionQuery) -> list[ProposedFileChange] | None:
    if query.changes is None:
        return None
    return [
        ProposedFileChange(path=str(c.path), old_text=c.old_text, new_text=c.new_text)
        for c in query.changes
    ]


def unattended_refusal(what: str) -> str:
    """What the model is told when no one can be asked (a front end's "unattended" answer:
    `agentls run` without a terminal): not the user's feedback, and nothing it can rerun."""
    return (
        f"Not done: the user is not at a terminal, so no one can be asked {what}. Do not retry "
        "and do not look for a way around it: say in your final message what needs the user "
        "(what you would do, and why), and stop."
    )


async def ask_user(
    ask: Asker, session_id: str, call_id: str, question: str, choices: list[str]
) -> tuple[str, str | None]:
    """ask_user's question through the one ask path (no rule answers it): ("answered", the
    answer) when the user answered "once" with words (a choice's or their own), ("declined",
    their note) when they rejected it or answered with nothing, ("timeout", None), or
    ("unattended", what the model is told) when no one could be asked."""
    query = PermissionQuery(
        tool="ask_user",
        subject=question,
        title=" ".join(question.split())[:200],
        input={"question": question, "choices": list(choices)},
    )
    answer = await ask(AskContext(session_id, call_id, query))
    said = (answer.feedback or "").strip() or None
    if answer.decision in ("once", "always") and said is not None:
        return "answered", said
    if answer.decision == "timeout":
        return "timeout", None
    if answer.decision == "unattended":
        return "unattended", unattended_refusal("this question")
    return "declined", None if answer.decision in ("once", "always") else said


def answer_taken(
    answer: Answer, ctx: AskContext
) -> Decision | Literal["timeout", "cancelled", "unattended"]:
    """The decision as the loop takes it, for permission-resolved events: "always" where it was
    not offered (ctx.always is None) is "once" (CallContext.authorize tells the model)."""
    if answer.decision == "always" and ctx.always is None:
        return "once"
    return answer.decision


async def ask_through_broker(
    ctx: AskContext,
    broker: ApprovalBroker,
    emit: EventSink,
    presenter: QuestionPresenter | None,
) -> Answer:
    """The one ask path (see the module's docstring)."""
    request_id = broker.open(ctx.session_id)
    query = ctx.query
    question = Question(ctx.session_id, request_id, ctx.call_id, query, ctx.always)
    question.parent_session_id, question.agent = ctx.parent_session_id, ctx.agent
    question.parent_call_id = ctx.parent_call_id
    try:
        with presenter(question) if presenter is not None else nullcontext():
            emit(
                PermissionRequestEvent(
                    session_id=ctx.session_id,
                    request_id=request_id,
                    call_id=ctx.call_id,
                    tool=query.tool,
                    title=query.title,
                    input=query.input,
                    diff=query.diff,
                    edit=question.edit,
                    always=ctx.always,
                    sandboxed=query.sandboxed,
                    changes=_changes(query),
                    **ctx.origin(),
                )
            )
            answer = await broker.wait(request_id)
    except asyncio.CancelledError:
        emit(
            PermissionResolvedEvent(
                session_id=ctx.session_id,
                request_id=request_id,
                decision="cancelled",
                **ctx.origin(),
            )
        )
        raise
    emit(
        PermissionResolvedEvent(
            session_id=ctx.session_id,
            request_id=request_id,
            decision=answer_taken(answer, ctx),
            **ctx.origin(),
        )
    )
    return answer
