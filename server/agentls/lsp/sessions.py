"""The session requests: agent/newSession, listSessions, getMessages, prompt, retry, setMode,
cancel, revert, unrevert.
Each validates its params, asks the Agent, and answers with the protocol's result model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from pygls.exceptions import JsonRpcRequestCancelled

from agentls.lsp import background
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.editor import item_of
from agentls.lsp.settings import recheck_workspace_config
from agentls.lsp.transport import invalid, known_session, parse, request_failed
from agentls.lsp.workspace import uri_of
from agentls.protocol.models import (
    CancelParams,
    CancelResult,
    GetMessagesParams,
    GetMessagesResult,
    ListSessionsParams,
    ListSessionsResult,
    MessageInfo,
    NewSessionParams,
    NewSessionResult,
    PromptParams,
    PromptResult,
    RetryParams,
    RevertParams,
    RevertResult,
    SessionInfo,
    SetModeParams,
    SetModeResult,
    TurnFinishReason,
)
from agentls.protocol.review import RevertConflict, UnrevertParams, UnrevertResult
from agentls.session import (
    CommandError,
    Conflict,
    NotACheckpoint,
    NothingToRedo,
    NothingToRetry,
    PromptRefused,
    SessionBusyError,
    TurnResult,
)


async def new_session(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(NewSessionParams, raw)
    recheck_workspace_config(ls)  # a config changed meanwhile: asked about, not applied unseen
    agent = await ls.agent()
    record = await agent.new_session(params.title)
    return NewSessionResult(session_id=record.id).wire()


async def list_sessions(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(ListSessionsParams, raw)
    agent = await ls.agent()
    records = await agent.search_sessions(params.query or "", cwd=ls.root)
    elsewhere = {
        r.id: (r, info) for r, info in await background.background_sessions(ls, params.query or "")
    }
    extra = [r for r, _ in elsewhere.values()]
    records = sorted([*records, *extra], key=lambda r: r.updated_at, reverse=True)
    previews = await agent.store.previews([r.id for r in records])
    sessions = [
        SessionInfo(
            session_id=r.id,
            title=r.title,
            created_at=r.created_at,
            updated_at=r.updated_at,
            busy=agent.is_busy(r.id),
            model=r.model,
            usage=r.usage,
            subagent_usage=r.subagent_usage,
            mode=r.mode,
            parent_id=r.parent_id,
            agent=r.agent,
            preview=previews.get(r.id),
            background=elsewhere[r.id][1] if r.id in elsewhere else None,
        )
        for r in records
    ]
    return ListSessionsResult(sessions=sessions).wire()


async def get_messages(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(GetMessagesParams, raw)
    agent = await ls.agent()
    load = agent.history if params.history == "all" else agent.messages
    messages = await known_session(params.session_id, load)
    state = await agent.session(params.session_id)
    summary = state.record.summary_message_id
    ids = [m.id for m in messages]
    # With "all", the messages stored before the summary in force are what it summarizes.
    before = ids.index(summary) if params.history == "all" and summary in ids else 0
    return GetMessagesResult(
        todos=list(state.todos),
        mode=state.record.mode,
        messages=[
            MessageInfo(
                id=m.id,
                role=m.role,
                created_at=m.created_at,
                parts=list(m.parts),
                finish_reason=m.finish_reason,
                reverted=m.reverted or None,
                summarized=i < before or None,
            )
            for i, m in enumerate(messages)
        ],
    ).wire()


async def prompt(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(PromptParams, raw)
    if params.background:  # a new session in its own worktree (lsp/background.py)
        return await background.start(ls, params)
    background.refuse_prompting(params.session_id)
    agent = await ls.agent()
    items = [item_of(ls, ref) for ref in params.context or []]
    try:
        result = await known_session(
            params.session_id,
            lambda sid: agent.prompt_with_items(sid, params.text, items, mode=params.mode),
        )
    except PromptRefused as exc:  # a sub-agent's session, an image or a file not attached
        raise invalid(f"Invalid params: {exc.field}: {exc}") from None
    except CommandError as exc:  # "/NAME": unknown, a refused @path, ...: nothing was sent
        raise invalid(f"Invalid params: text: {exc}") from None
    return turn_result(result)


async def retry(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(RetryParams, raw)
    background.refuse_prompting(params.session_id)
    agent = await ls.agent()
    await known_session(params.session_id, agent.session)
    try:
        result = await agent.retry(params.session_id)
    except NothingToRetry as exc:
        raise invalid(f"Invalid params: sessionId: {exc}") from None
    return turn_result(result)


def turn_result(result: TurnResult) -> dict[str, Any]:
    """A turn's outcome as agent/prompt and agent/retry answer it."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        # $/cancelRequest: the turn was cancelled cleanly; answer as the protocol says.
        raise JsonRpcRequestCancelled()
    return PromptResult(
        session_id=result.session_id,
        message_id=result.message_id,
        # A turn never ends on tool_use (that is a step's reason), so this is a turn reason.
        finish_reason=cast(TurnFinishReason, result.finish_reason),
        text=result.text,
        usage=result.usage,
    ).wire()


async def set_mode(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(SetModeParams, raw)
    agent = await ls.agent()
    await known_session(params.session_id, agent.session)
    await agent.set_mode(params.session_id, params.mode)
    return SetModeResult(mode=params.mode).wire()


async def cancel(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(CancelParams, raw)
    # A background session this server runs is stopped in its own Agent (lsp/background_run.py).
    agent = ls.background_agents.get(params.session_id) or await ls.agent()
    cancelled = await known_session(params.session_id, agent.cancel)
    return CancelResult(cancelled=cancelled).wire()


async def revert(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(RevertParams, raw)
    agent = await ls.agent()
    await known_session(params.session_id, agent.session)
    try:
        outcome = await agent.revert(
            params.session_id, params.message_id, params.scope, params.dry_run
        )
    except (KeyError, NotACheckpoint) as exc:
        raise invalid(f"Invalid params: messageId: {exc.args[0]}") from None
    except SessionBusyError as exc:
        raise invalid(f"Invalid params: sessionId: {exc}") from None
    notes = []
    if outcome.bash_not_undone:
        notes.append("Commands run with bash since then were not undone.")
    if outcome.problems:
        notes.append("Nothing was reverted: " + "; ".join(outcome.problems))
    return RevertResult(
        files=[uri_of(Path(f)) for f in outcome.files],
        conflicts=conflicts_of(outcome.conflicts),
        bash_not_undone=outcome.bash_not_undone,
        bash_commands=outcome.bash_commands,
        prompt=outcome.prompt,
        note=" ".join(notes) or None,
    ).wire()


async def unrevert(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(UnrevertParams, raw)
    agent = await ls.agent()
    await known_session(params.session_id, agent.session)
    try:
        outcome = await agent.unrevert(params.session_id)
    except (NothingToRedo, SessionBusyError) as exc:
        raise invalid(f"Invalid params: sessionId: {exc}") from None
    if outcome.problems:
        raise request_failed("Nothing was redone: " + "; ".join(outcome.problems))
    return UnrevertResult(
        files=[uri_of(Path(f)) for f in outcome.files],
        conflicts=conflicts_of(outcome.conflicts),
        message_ids=outcome.message_ids,
    ).wire()


def conflicts_of(conflicts: list[Conflict]) -> list[RevertConflict]:
    return [
        RevertConflict(path=uri_of(Path(c.path)), before=c.before, agent=c.agent, current=c.current)
        for c in conflicts
    ]
