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
from pathlib import Path
from typing import Any

from lsprotocol import types

from agentls.lsp.accepted import EditRefused, Proposal, ProposedFile, accepted_texts
from agentls.lsp.agent_server import AgentServer, PendingEdit
from agentls.lsp.background_answers import answer as answer_detached
from agentls.lsp.background_answers import detached_record
from agentls.lsp.transport import invalid, parse, request_failed
from agentls.lsp.workspace import relative_name, uri_of
from agentls.protocol.models import ApproveParams, ApproveResult
from agentls.session import Agent, ApprovalError, Question, QuestionPresenter

log = logging.getLogger(__name__)
# A diff longer than this is cut in the message request.
MESSAGE_DIFF_CHARS = 1500


# ---- answers ----------------------------------------------------------------------------


async def approve(ls: AgentServer, raw: Any) -> dict[str, Any]:
    """agent/approve (and the agent.approve command): answer a question once, always or reject;
    with `edit`, accept that change instead of the proposal (see accepted_change)."""
    if (
        isinstance(raw, dict)
        and "decision" in raw
        and raw["decision"] not in ("once", "always", "reject")
    ):
        raise invalid(
            f"Invalid params: decision: must be once, always or reject (got {raw['decision']!r})"
        )
    params = parse(ApproveParams, raw)
    detached = (
        None if params.session_id in ls.background_agents else detached_record(params.session_id)
    )
    if detached is not None:  # `agentls run --background`'s run waits on it
        await asyncio.to_thread(answer_detached, detached, params)
        return ApproveResult().wire()
    agent = ls.background_agents.get(params.session_id) or await ls.agent()
    try:
        await agent.session(params.session_id)
    except KeyError:
        raise invalid(f"Invalid params: sessionId: unknown session {params.session_id!r}") from None
    decision, accepted, feedback = params.decision, None, params.feedback
    proposal = ls.proposals.get(params.request_id)
    if proposal is not None and proposal.conflicts and proposal.session_id == params.session_id:
        # The user changed lines the proposal changes too (lsp/rebase.py): never written over.
        if decision != "reject":
            raise request_failed(
                f"agentls: this proposal cannot be accepted: you changed "
                f"{conflict_words(ls, proposal)} while it waited, lines it changes too, so "
                "accepting would write over your text. Reject it (the agent is told why), or "
                "undo your change there to accept it."
            )
        feedback = rejection_note(ls, proposal, feedback)
    if params.edit is not None:
        accepted = accepted_change(ls, params)
        if accepted is not None and not accepted:
            decision, accepted = "reject", None  # none of it accepted
    try:
        agent.approve(
            params.session_id,
            params.request_id,
            decision,
            feedback,
            params.scope,
            accepted=accepted,
        )
    except ApprovalError as exc:
        raise invalid(f"Invalid params: requestId: {exc}") from None
    return ApproveResult().wire()


def conflict_words(ls: AgentServer, proposal: Proposal) -> str:
    """The lines the user changed that a conflicting proposal changes too: "line 4 of app.py"."""
    return "; ".join(
        f"{where} of {relative_name(path, ls.root)}" for path, where in proposal.conflicts.items()
    )


def rejection_note(ls: AgentServer, proposal: Proposal, feedback: str | None) -> str:
    """What the model is told when the user rejects a conflicting proposal."""
    note = (
        f"(agentls: the user changed {conflict_words(ls, proposal)} while your proposal waited, "
        "lines your change changes too, so it could not be applied without writing over their "
        "text. Read the file again before changing it.)"
    )
    return f"{feedback.strip()}\n{note}" if feedback and feedback.strip() else note


def accepted_change(ls: AgentServer, params: ApproveParams) -> dict[Path, str] | None:
    """The accepted texts of agent/approve's `edit` (empty: nothing accepted, a reject; None:
    exactly the proposal, a plain accept); an Invalid params error naming `edit` (or
    `requestId`) when it cannot be taken, the question left open."""
    assert params.edit is not None
    proposal = ls.proposals.get(params.request_id)
    if proposal is None:
        raise invalid(
            f"Invalid params: requestId: no open question {params.request_id!r} "
            "(unknown, answered or expired)"
        )
    if proposal.session_id != params.session_id:
        raise invalid(
            f"Invalid params: requestId: {params.request_id!r} does not belong to session "
            f"{params.session_id!r}"
        )
    if params.decision != "once":
        raise invalid(
            f"Invalid params: edit: an accepted change goes with decision once "
            f"(got {params.decision!r})"
        )
    if not proposal.files:
        raise invalid("Invalid params: edit: the question does not propose a change to files")
    try:
        texts = accepted_texts(
            proposal,
            params.edit,
            ls.protocol._converter.structure,
            ls.client_caps.position_encoding,
        )
    except EditRefused as exc:
        raise invalid(f"Invalid params: edit: {exc}") from None
    return None if texts == proposal.proposed() else texts


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
    files = proposed_files(ls, question)
    if files and ls.ws is not None:
        edit = proposal_edit(ls, files)
        question.edit = ls.protocol._converter.unstructure(edit)
        if query.path is not None:
            file = files[0]
            pending = PendingEdit(
                question.session_id,
                request_id,
                file.uri,
                edit_range(edit),
                query.title,
                hunks=[] if file.old_text is None else text_edits_of(edit),
                version=file.version,
            )
    origin = {}
    if question.parent_session_id is not None:
        origin = {
            "parent_session_id": question.parent_session_id,
            "parent_call_id": question.parent_call_id,
            "agent": question.agent,
        }
    ls.proposals[request_id] = Proposal(question.session_id, files, origin=origin)
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
        ls.proposals.pop(request_id, None)
        if message_task is not None and not message_task.done():
            message_task.cancel()


def proposal_edit(ls: AgentServer, files: list[ProposedFile]) -> types.WorkspaceEdit:
    """The WorkspaceEdit that shows a proposal's files: one TextEdit per hunk of each."""
    assert ls.ws is not None
    edit = types.WorkspaceEdit()
    for file in files:
        one = ls.ws.build_edit(file.path, file.new_text, file.old_text, per_hunk=True)
        if one.document_changes is not None:
            edit.document_changes = [*(edit.document_changes or []), *one.document_changes]
        if one.changes is not None:
            edit.changes = {**(edit.changes or {}), **one.changes}
    return edit


def proposed_files(ls: AgentServer, question: Question) -> list[ProposedFile]:
    """The files a question proposes to change (none: it is not a change to files)."""
    query = question.query
    if ls.ws is None:
        return []
    ws = ls.ws

    def file(path: Path, old_text: str | None, new_text: str) -> ProposedFile:
        doc = ws.open_document(path)
        version = doc.version if doc is not None else None
        return ProposedFile(path, uri_of(path), old_text, new_text, version)

    if query.path is not None and query.new_text is not None:
        return [file(query.path, query.old_text, query.new_text)]
    return [file(c.path, c.old_text, c.new_text) for c in query.changes or []]


def text_edits_of(edit: types.WorkspaceEdit) -> list[types.TextEdit]:
    """The TextEdits of a one-document edit, in order."""
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            return [e for e in change.edits if isinstance(e, types.TextEdit)]
    for edits in (edit.changes or {}).values():
        return list(edits)
    return []


def user_question_actions(question: Question) -> tuple[str, dict[str, tuple[str, str | None]]]:
    """ask_user as a message request: the question, and a button per choice (the answer it
    gives) and Skip. A message request takes no typed answer: an open question gets Skip only,
    and the model is told to offer choices."""
    query = question.query
    choices = [c for c in query.input.get("choices") or [] if isinstance(c, str)]
    actions: dict[str, tuple[str, str | None]] = {c: ("once", c) for c in choices}
    note = None if choices else "this editor can show choices only; ask again with choices"
    actions["Skip"] = ("reject", note)
    return f"agentls asks: {query.input.get('question', '')}", actions


async def ask_user_with_message(ls: AgentServer, question: Question) -> None:
    text, actions = user_question_actions(question)
    answered = await _message_answer(ls, question, text, list(actions))
    if answered is None:
        return
    agent, title = answered
    decision, said = actions.get(title, actions["Skip"])
    try:
        agent.approve(question.session_id, question.request_id, decision, said)
    except ApprovalError:
        pass  # answered elsewhere or expired


async def ask_with_message(ls: AgentServer, question: Question) -> None:
    """window/showMessageRequest, its buttons the answers: once, always (each scope, when
    "always" is offered, named by what it allows), reject."""
    query = question.query
    if query.tool == "ask_user":
        return await ask_user_with_message(ls, question)
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
    answered = await _message_answer(ls, question, text, list(actions))
    if answered is None:
        return
    agent, title = answered
    decision, scope = actions.get(title, actions["Reject"])
    try:
        agent.approve(question.session_id, question.request_id, decision, scope=scope)
    except ApprovalError:
        pass  # answered elsewhere (a code action, agent/approve) or expired: never applied twice


async def _message_answer(
    ls: AgentServer, question: Question, text: str, titles: list[str]
) -> tuple[Agent, str] | None:
    """The question asked with window/showMessageRequest, `titles` its buttons: the Agent that
    waits for the answer and the button chosen ("" when the message was dismissed); None when
    there is nothing to answer (the request cancelled or failed, the session gone)."""
    try:
        result = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=text,
                actions=[types.MessageActionItem(title=t) for t in titles],
            )
        )
    except asyncio.CancelledError:
        return None
    except Exception:
        log.exception("showMessageRequest failed")
        return None
    agent = ls.background_agents.get(question.session_id) or ls.running_agent
    if agent is None:
        return None
    return agent, result.title if result is not None else ""


# ---- pending edits as code actions ------------------------------------------------------


def pending_edit_actions(ls: AgentServer, uri: str, rng: types.Range) -> list[types.CodeAction]:
    """Accept / reject code actions for the pending edits on the lines of `rng`: the whole edit,
    and each hunk under it (accepted alone, or rejected with the others accepted)."""
    actions: list[types.CodeAction] = []
    for pending in list(ls.pending_edits.values()):
        if pending.uri != uri:
            continue
        answer = {"sessionId": pending.session_id, "requestId": pending.request_id}
        under = [h for h in pending.hunks if ranges_touch(hunk_lines(h.range), rng)]
        if under or ranges_touch(hunk_lines(pending.range), rng):
            for title, decision in (
                ("Accept agent edit", "once"),
                ("Reject agent edit", "reject"),
            ):
                actions.append(
                    approve_action(f"{title}: {pending.title}", {**answer, "decision": decision})
                )
        for hunk in under:
            index = pending.hunks.index(hunk)
            where = f"{pending.title}, {lines_label(hunk.range)}"
            accept = {**answer, "decision": "once", "edit": hunks_edit(ls, pending, [hunk])}
            others = pending.hunks[:index] + pending.hunks[index + 1 :]
            reject: dict[str, Any] = {**answer, "decision": "reject"}
            if others:
                reject = {**answer, "decision": "once", "edit": hunks_edit(ls, pending, others)}
            actions.append(approve_action(f"Accept this hunk: {where}", accept))
            actions.append(approve_action(f"Reject this hunk: {where}", reject))
    return actions


def approve_action(title: str, answer: dict[str, Any]) -> types.CodeAction:
    """A code action running the agent.approve command with `answer`."""
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.QuickFix,
        command=types.Command(
            title=title.split(":")[0], command="agent.approve", arguments=[answer]
        ),
    )


def hunks_edit(
    ls: AgentServer, pending: PendingEdit, hunks: list[types.TextEdit]
) -> dict[str, Any]:
    """The WorkspaceEdit of some of a pending edit's hunks, as agent/approve's `edit`."""
    edit = types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=pending.uri, version=pending.version
                ),
                edits=hunks,
            )
        ]
    )
    unstructured: dict[str, Any] = ls.protocol._converter.unstructure(edit)
    return unstructured


def hunk_lines(rng: types.Range) -> types.Range:
    """The lines a hunk's whole-line range covers: its end at the start of a line is not one of
    them (an insertion covers the line it goes before)."""
    end = rng.end
    if end.character == 0 and end.line > rng.start.line:
        end = types.Position(line=end.line - 1, character=0)
    return types.Range(start=rng.start, end=end)


def lines_label(rng: types.Range) -> str:
    lines = hunk_lines(rng)
    first, last = lines.start.line + 1, lines.end.line + 1
    if rng.start == rng.end:
        return f"before line {first}"
    return f"line {first}" if first == last else f"lines {first}-{last}"


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
