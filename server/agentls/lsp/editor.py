"""The editor's side of the agent: open documents (whose changes and saves an edit waits for),
code actions on a selection and agent.runOnSelection, the diagnostics an editor pushes to verify
edits with (agent/diagnostics), and a prompt's context items as the Agent takes them (it reads
and checks them)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import to_fs_path

from agentls.events import ErrorEvent
from agentls.history import Position
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.approvals import pending_edit_actions
from agentls.lsp.rebase import rebase_proposals
from agentls.lsp.textedit import offset_at
from agentls.lsp.transport import invalid, known_session, parse
from agentls.protocol.models import (
    ContextRef,
    DiagnosticsParams,
    ImageRef,
    RunOnSelectionParams,
    RunOnSelectionResult,
    TextRef,
)
from agentls.session import (
    Agent,
    ContextItem,
    FileItem,
    ImageItem,
    PromptRefused,
    StoreError,
    TextItem,
)

log = logging.getLogger(__name__)
CODE_ACTION_KINDS = [
    types.CodeActionKind.QuickFix,
    types.CodeActionKind.RefactorRewrite,
    types.CodeActionKind.Empty,
]


# ---- documents --------------------------------------------------------------------------


def did_open(ls: AgentServer, params: types.DidOpenTextDocumentParams) -> None:
    if ls.ws is not None:
        ls.ws.document_changed(params.text_document.uri)


def did_change(ls: AgentServer, params: types.DidChangeTextDocumentParams) -> None:
    if ls.ws is not None:
        ls.ws.document_changed(params.text_document.uri)
        rebase_proposals(ls, params.text_document.uri)  # waiting proposals follow the typing


def did_save(ls: AgentServer, params: types.DidSaveTextDocumentParams) -> None:
    if ls.ws is not None:
        ls.ws.document_saved(params.text_document.uri)


def did_close(ls: AgentServer, params: types.DidCloseTextDocumentParams) -> None:
    return None


async def diagnostics(ls: AgentServer, raw: Any) -> None:
    """agent/diagnostics: what the editor reports for a document, to verify an edit with."""
    try:
        params = parse(DiagnosticsParams, raw)
    except JsonRpcInvalidParams as exc:
        log.warning("ignoring agent/diagnostics: %s", exc.message)
        return
    if ls.config_error is not None:
        return  # no agent to verify edits with; a notification has no one to tell
    await ls.agent()
    assert ls.ws is not None
    await ls.ws.diagnostics_pushed(params.uri, params.version, params.diagnostics)


# ---- code actions -----------------------------------------------------------------------


SELECTION_ACTIONS = (
    (
        "Ask agent about this",
        "Explain the selected code and point out anything wrong with it.",
        types.CodeActionKind.Empty,
    ),
    (
        "Agent: fix the problems here",
        "Fix the problems in the selected code.",
        types.CodeActionKind.QuickFix,
    ),
    (
        "Agent: refactor this",
        "Refactor the selected code for clarity without changing its behaviour.",
        types.CodeActionKind.RefactorRewrite,
    ),
)


PLAN_ACTION = "Agent: plan a change here"
PLAN_INSTRUCTION = (
    "Plan a change to the selected code: ask yourself what the user most likely wants changed "
    "here, investigate, and present the plan with exit_plan."
)


def code_action(ls: AgentServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The pending edits on these lines (accept, reject), then the agent on the selection."""
    uri = params.text_document.uri
    rng = params.range
    args = {"uri": uri, "range": ls.protocol._converter.unstructure(rng)}
    actions = pending_edit_actions(ls, uri, rng)
    problems = list(params.context.diagnostics)
    for title, instruction, kind in SELECTION_ACTIONS:
        fixing = kind == types.CodeActionKind.QuickFix
        if fixing and problems:
            listed = "\n".join(
                f"- line {d.range.start.line + 1}: {d.message}" for d in problems[:20]
            )
            instruction += "\nThe editor reports:\n" + listed
        actions.append(
            types.CodeAction(
                title=title,
                kind=kind,
                diagnostics=problems if fixing and problems else None,
                command=types.Command(
                    title=title,
                    command="agent.runOnSelection",
                    arguments=[{**args, "instruction": instruction}],
                ),
            )
        )
    # A plan first (plan mode, a new session): nothing changes until the user approves it.
    actions.append(
        types.CodeAction(
            title=PLAN_ACTION,
            kind=types.CodeActionKind.Empty,
            command=types.Command(
                title=PLAN_ACTION,
                command="agent.runOnSelection",
                arguments=[{**args, "instruction": PLAN_INSTRUCTION, "mode": "plan"}],
            ),
        )
    )
    return actions


async def run_on_selection(ls: AgentServer, *args: Any) -> dict[str, Any]:
    """agent.runOnSelection: the instruction, with the selection attached, in the given session
    (else the latest of the workspace, else a new one); answered at once, the turn runs on."""
    if len(args) != 1:
        raise invalid("Invalid params: arguments: expected one params object")
    params = parse(RunOnSelectionParams, args[0])
    agent = await ls.agent()
    session_id = params.session_id
    if session_id is not None:
        await known_session(session_id, agent.session)
    elif params.mode == "plan":
        session_id = (await agent.new_session()).id
    else:
        recent = await agent.list_sessions(limit=1, cwd=ls.root)
        session_id = recent[0].id if recent else (await agent.new_session()).id
    if params.mode is not None:
        await agent.set_mode(session_id, params.mode)
    selection = item_of(ls, ContextRef(uri=params.uri, range=params.range))
    ls.spawn(prompt_in_background(ls, agent, session_id, params.instruction, selection))
    return RunOnSelectionResult(session_id=session_id).wire()


async def prompt_in_background(
    ls: AgentServer, agent: Agent, session_id: str, text: str, selection: ContextItem
) -> None:
    """A prompt no request waits for: a refusal by the store (the session busy in another
    process, a store fault) or of the selection's file (a link out of the workspace, to a secret)
    is an error event of the session, and shown to the user."""
    try:
        await agent.prompt_with_items(session_id, text, [selection])
    except (StoreError, PromptRefused) as exc:
        message = exc.message if isinstance(exc, StoreError) else str(exc)
        agent.emit(ErrorEvent(session_id=session_id, message=message))
        ls.show_message(f"agentls: {message}")


# ---- context ----------------------------------------------------------------------------


def item_of(ls: AgentServer, ref: ContextRef | TextRef | ImageRef) -> ContextItem:
    """A prompt's context item as the Agent takes it (session/context_items.py reads and checks
    it): a file or a selection (cut in the client's position units), a labelled text, an image."""
    if isinstance(ref, ImageRef):
        return ImageItem(data=ref.data, uri=ref.uri)
    if isinstance(ref, TextRef):
        return TextItem(label=ref.label, text=ref.text)
    path = Path(to_fs_path(ref.uri) or ref.uri)
    rng, encoding = ref.range, ls.client_caps.position_encoding
    if rng is None:
        return FileItem(path=path, uri=ref.uri)

    def select(text: str) -> str:
        start = offset_at(text, lsp_position(rng.start), encoding)
        return text[start : offset_at(text, lsp_position(rng.end), encoding)]

    return FileItem(path=path, uri=ref.uri, range=rng, select=select)


def lsp_position(position: Position) -> types.Position:
    return types.Position(line=position.line, character=position.character)
