"""Permission questions as `session/request_permission`: the tool call with its diff, and the
options allow once / always (this session, this project; only where "always" is offered, named
by what it allows) / reject. The answer goes through Agent.approve, like every front end's.

ACP has no words to send back with a rejection; a client may put them in the response's
`_meta.feedback` (a string), and the model receives them. ask_user's questions: acp/questions.py;
a change of several hunks is asked hunk by hunk: acp/hunk_requests.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from acp.schema import (
    AllowedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from agentls.acp.hunk_requests import Ask, ask_by_hunk, asked_by_hunk
from agentls.acp.questions import form_answer, permission_answer, question_form, question_options
from agentls.acp.tools import ToolContent, input_content, kind_of, locations_of, text_content
from agentls.session import Agent, ApprovalError, Question, QuestionPresenter

log = logging.getLogger(__name__)

SANDBOXED = "Sandboxed: it can write only inside the workspace, and secret files are hidden."
UNSANDBOXED = "Not sandboxed: it runs with your full access."

# Clients that ask the user again before each `fs/write_text_file` they are sent, whatever the
# user answered to the edit's `session/request_permission` (acpx: outside --approve-all it asks
# "Allow write?" for every write). ACP has no way to say that a write was approved already, so an
# edit approved in agentls's question is written to the disk for them (they hold no unsaved
# buffers), not through the client: one question per edit. An editor that writes without asking
# (Zed writes into its buffer and shows the change) keeps getting the edit through the protocol.
WRITES_ASKED_BY_CLIENT = frozenset({"acpx"})


def client_asks_before_writes(client_name: str | None) -> bool:
    """Whether the client asks again before each fs/write_text_file (see above)."""
    return (client_name or "").strip().lower() in WRITES_ASKED_BY_CLIENT


# option id -> (decision, scope)
ANSWERS: dict[str, tuple[str, str]] = {
    "allow_once": ("once", "session"),
    "allow_always": ("always", "session"),
    "allow_always_project": ("always", "project"),
    "reject_once": ("reject", "session"),
}


def options_for(question: Question) -> list[PermissionOption]:
    if question.query.tool == "ask_user":  # a question to the user (acp/questions.py)
        return question_options(question)
    if question.query.tool == "exit_plan":  # a plan to approve (plan mode)
        return [
            PermissionOption(option_id="allow_once", name="Start building", kind="allow_once"),
            PermissionOption(option_id="reject_once", name="Keep planning", kind="reject_once"),
        ]
    options = [PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")]
    if question.always:
        options.append(
            PermissionOption(
                option_id="allow_always",
                name=f"{question.always} (this session)",
                kind="allow_always",
            )
        )
        options.append(
            PermissionOption(
                option_id="allow_always_project",
                name=f"{question.always} (this project)",
                kind="allow_always",
            )
        )
    options.append(PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"))
    return options


def tool_call_for(root: Path, question: Question) -> ToolCallUpdate:
    """The call the question is about, with the whole change it would make (each file's text
    before and after), or what the call shows before it runs."""
    query = question.query
    content: list[ToolContent] = []
    if query.changes:
        content = [
            FileEditToolCallContent(
                type="diff", path=str(c.path), old_text=c.old_text, new_text=c.new_text
            )
            for c in query.changes
        ]
    elif query.path is not None and query.new_text is not None:
        content = [
            FileEditToolCallContent(
                type="diff", path=str(query.path), old_text=query.old_text, new_text=query.new_text
            )
        ]
    else:
        content = input_content(root, query.tool, query.input)
    if query.tool == "bash":
        # Where the command would run, as the VS Code panel says it.
        content.append(text_content(SANDBOXED if query.sandboxed else UNSANDBOXED))
    return ToolCallUpdate(
        tool_call_id=question.call_id,
        title=query.title,
        kind=kind_of(query.tool),
        status="pending",
        content=content,
        locations=locations_of(root, query.tool, query.input),
        raw_input=query.input,
    )


def answer_of(response: RequestPermissionResponse) -> tuple[str, str, str | None]:
    """(decision, scope, feedback) of the client's answer; anything but a known option (the
    question cancelled, an unknown option id) is a rejection."""
    outcome = response.outcome
    decision, scope = ("reject", "session")
    if isinstance(outcome, AllowedOutcome):
        decision, scope = ANSWERS.get(outcome.option_id, (decision, scope))
    feedback = None
    meta = response.field_meta or {}
    if decision == "reject" and isinstance(meta.get("feedback"), str) and meta["feedback"].strip():
        feedback = meta["feedback"].strip()
    return decision, scope, feedback


class PermissionAsker:
    """The QuestionPresenter of the ACP front end: `client` is the connection (set once it
    exists), `agent_of` the Agent that asks (by session)."""

    def __init__(
        self, agent_of: Callable[[str], Agent | None], flush: Callable[[], Awaitable[None]]
    ) -> None:
        self.client: Any = None
        self.agent_of = agent_of
        # Sends the session updates queued so far: the call is shown before its question.
        self.flush = flush
        # The client shows elicitation forms (acp/questions.py): ask_user asks with one.
        self.elicits_form = False
        self._tasks: set[asyncio.Task[None]] = set()

    def presenter(self) -> QuestionPresenter:
        return self.presenting

    @contextmanager
    def presenting(self, question: Question) -> Iterator[None]:
        task = asyncio.ensure_future(self.ask(question))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            yield
        finally:
            if not task.done():
                task.cancel()  # answered, expired, or the turn was cancelled

    async def ask(self, question: Question) -> None:
        # A sub-agent's question is asked in the session the editor knows, its parent's, about
        # the task call it shows there.
        shown = question.parent_session_id or question.session_id
        agent = self.agent_of(shown)
        if agent is None or self.client is None:
            return
        tool_call = tool_call_for(agent.root, question)
        if question.parent_call_id is not None:
            tool_call = tool_call.model_copy(update={"tool_call_id": question.parent_call_id})
        asks_user = question.query.tool == "ask_user"
        accepted: dict[Path, str] | None = None
        by_hunk = asked_by_hunk(question)
        try:
            await self.flush()
            if by_hunk:  # a change of several hunks: one request per hunk (acp/hunk_requests.py)
                hunks = await ask_by_hunk(
                    agent.root, question, tool_call, by_hunk, self._asker(shown)
                )
                decision, scope, feedback = hunks.decision, hunks.scope, hunks.feedback
                accepted = hunks.accepted
            elif asks_user and self.elicits_form:
                form = question_form(question, shown, tool_call.tool_call_id)
                message = str(question.query.input.get("question", ""))
                answer = await self.client.create_elicitation(message=message, mode=form)
                (decision, feedback), scope = form_answer(answer), "session"
            else:
                response = await self.client.request_permission(
                    session_id=shown,
                    tool_call=tool_call,
                    options=options_for(question),
                )
                decision, scope, feedback = answer_of(response)
                if asks_user:
                    decision, feedback = permission_answer(question, response)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the client failed to answer: refused, and the model told why
            log.warning("session/request_permission failed: %s", exc)
            decision, scope, feedback = ("reject", "session", f"the editor did not answer: {exc}")
        try:
            agent.approve(
                question.session_id, question.request_id, decision, feedback, scope, accepted
            )
        except ApprovalError:
            pass  # expired or cancelled meanwhile

    def _asker(self, session_id: str) -> Ask:
        async def ask(call: ToolCallUpdate, options: list[PermissionOption]) -> Any:
            return await self.client.request_permission(
                session_id=session_id, tool_call=call, options=options
            )

        return ask
