"""Permission questions in the editor, and their answers.

A question is asked by the Agent (Agent.ask) and shown by `presenting`: the edit it would make
goes into the permission-request event as a WorkspaceEdit (the approvals panel previews it). A
client without the approvals capability is asked with window/showMessageRequest instead, and a
pending edit is offered as code actions on its range. Every path answers through Agent.approve:
agent/approve, the agent.approve command (those code actions), the message's buttons.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lsprotocol import types

from agentls.lsp.agent_server import AgentServer, PendingEdit
from agentls.lsp.transport import invalid, parse
from agentls.lsp.workspace import uri_of
from agentls.protocol.models import ApproveParams, ApproveResult
from agentls.session import ApprovalError, Question, QuestionPresenter

log = logging.getLogger(__name__)
# A diff longer than this is cut in the message request.
MESSAGE_DIFF_CHARS = 1500


# ---- answers ----------------------------------------------------------------------------


async def approve(ls: AgentServer, raw: Any) -> dict[str, Any]:
    """agent/approve (and the agent.approve command): answer a question once, always or reject."""
    if (
        isinstance(raw, dict)
        and "decision" in raw
        and raw["decision"] not in ("once", "always", "reject")
    ):
        raise invalid(
            f"Invalid params: decision: must be once, always or reject (got {raw['decision']!r})"
        )
    params = parse(ApproveParams, raw)
    agent = await ls.agent()
    try:
        await agent.session(params.session_id)
    except KeyError:
        raise invalid(f"Invalid params: sessionId: unknown session {params.session_id!r}") from None
    try:
        agent.approve(
            params.session_id, params.request_id, params.decision, params.feedback, params.scope
        )
    except ApprovalError as exc:
        raise invalid(f"Invalid params: requestId: {exc}") from None
    return ApproveResult().wire()


async def approve_command(ls: AgentServer, *args: Any) -> dict[str, Any]:
    if len(args) != 1:
        raise invalid("Invalid params: arguments: expected one params object")
    return await approve(ls, args[0])


# ---- showing a question -----------------------------------------------------------------


def presenter_for(ls: AgentServer) -> QuestionPresenter:
    return functools.partial(presenting, ls)


@contextmanager
def presenting(ls: AgentServer, question: Question) -> Iterator[None]:
    """Shows a question while the Agent waits for its answer (see Agent.ask)."""
    query = question.query
    request_id = question.request_id
    pending: PendingEdit | None = None
    if query.path is not None and query.new_text is not None and ls.ws is not None:
        edit = ls.ws.build_edit(query.path, query.new_text, query.old_text)
        question.edit = ls.protocol._converter.unstructure(edit)
        pending = PendingEdit(
            question.session_id, request_id, uri_of(query.path), edit_range(edit), query.title
        )
    message_task = None
    if not ls.client_caps.agent.approvals:
        # No panel to answer in: ask with the standard message request, and offer a pending
        # edit as code actions on its range.
        if pending is not None:
            ls.pending_edits[request_id] = pending
        message_task = ls.spawn(ask_with_message(ls, question))
    try:
        yield
    finally:
        ls.pending_edits.pop(request_id, None)
        if message_task is not None and not message_task.done():
            message_task.cancel()


async def ask_with_message(ls: AgentServer, question: Question) -> None:
    """window/showMessageRequest, its buttons the answers: once, always (each scope, when
    "always" is offered, named by what it allows), reject."""
    query = question.query
    text = f"agentls wants to run {query.tool}: {query.title}"
    if query.tool == "bash":
        text = f"agentls wants to run a command:\n{query.input.get('command', '')}"
    if query.tool == "exit_plan":  # "Allow once" approves the plan; "Reject" keeps planning
        text = (
            f"agentls has a plan. Approve it and start building?\n\n{query.input.get('plan', '')}"
        )
    if query.diff:
        diff = query.diff
        if len(diff) >= MESSAGE_DIFF_CHARS:
            diff = diff[:MESSAGE_DIFF_CHARS] + "\n... (diff cut)"
        text += "\n\n" + diff
    actions: dict[str, tuple[str, str]] = {"Allow once": ("once", "session")}
    if question.always:
        actions[f"{question.always} (this session)"] = ("always", "session")
        actions[f"{question.always} (this project)"] = ("always", "project")
    actions["Reject"] = ("reject", "session")
    try:
        result = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=text,
                actions=[types.MessageActionItem(title=t) for t in actions],
            )
        )
    except asyncio.CancelledError:
        return
    except Exception:
        log.exception("showMessageRequest failed")
        return
    chosen = actions.get(result.title) if result is not None else None
    decision, scope = chosen or ("reject", "session")
    agent = ls.running_agent
    if agent is None:
        return
    try:
        agent.approve(question.session_id, question.request_id, decision, scope=scope)
    except ApprovalError:
        pass  # answered elsewhere (a code action, agent/approve) or expired: never applied twice


# ---- pending edits as code actions ------------------------------------------------------


def pending_edit_actions(ls: AgentServer, uri: str, rng: types.Range) -> list[types.CodeAction]:
    """Accept / reject code actions for the pending edits on the lines of `rng`."""
    actions: list[types.CodeAction] = []
    for pending in list(ls.pending_edits.values()):
        if pending.uri != uri or not ranges_touch(pending.range, rng):
            continue
        for title, decision in (("Accept agent edit", "once"), ("Reject agent edit", "reject")):
            answer = {
                "sessionId": pending.session_id,
                "requestId": pending.request_id,
                "decision": decision,
            }
            actions.append(
                types.CodeAction(
                    title=f"{title}: {pending.title}",
                    kind=types.CodeActionKind.QuickFix,
                    command=types.Command(title=title, command="agent.approve", arguments=[answer]),
                )
            )
    return actions


def edit_range(edit: types.WorkspaceEdit) -> types.Range:
    """The range of an edit's first change (the start of the file when it has none)."""
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.edits:
            first = change.edits[0]
            return first.range
    for edits in (edit.changes or {}).values():
        if edits:
            return edits[0].range
    zero = types.Position(line=0, character=0)
    return types.Range(start=zero, end=zero)


def ranges_touch(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges share a line (a lightbulb is offered per line, not per character)."""
    return a.start.line <= b.end.line and b.start.line <= a.end.line
