"""agent/prompt `background: true` and the background sessions agent/listSessions lists: a
session of the workspace's repository running in its own git worktree (session/background.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentls.history import Usage
from agentls.lsp import background_run
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.background_answers import waiting_info
from agentls.lsp.transport import invalid
from agentls.protocol.background import BackgroundInfo, ChangedFileInfo
from agentls.protocol.models import PromptParams, PromptResult
from agentls.session import background as bg
from agentls.workspace.worktree import WorktreeError, repository_root


def info_of(status: bg.BackgroundStatus) -> BackgroundInfo:
    r = status.record
    changed = status.changed
    return BackgroundInfo(
        state=status.state,
        reason=status.reason,
        branch=r.branch,
        worktree=r.worktree,
        base=r.base,
        changed_files=None
        if changed is None
        else [ChangedFileInfo(path=c.path, added=c.added, removed=c.removed) for c in changed],
        questions=waiting_info(r) if status.state == "waiting" else [],
    )


async def start(ls: AgentServer, params: PromptParams) -> dict[str, Any]:
    """Start the prompt as a background session, run in this server (lsp/background_run.py);
    answer at once with it."""
    agent = await ls.agent()
    if params.context:
        raise invalid("Invalid params: context: a background prompt takes text only")
    settings = agent.settings
    try:
        overrides = {"model": settings.model}
        launch = background_run.launcher(ls, overrides)
        started = await bg.start(Path(ls.root), params.text, settings, launch, overrides)
    except bg.BackgroundError as exc:
        raise invalid(f"Invalid params: background: {exc}") from None
    r = started.record
    said = [f"Started in the background on branch {r.branch}, in {r.worktree}.", *started.notices]
    status = await asyncio.to_thread(bg.status, r)
    return PromptResult(
        session_id=r.session_id,
        message_id=None,
        finish_reason="end_turn",
        text="\n".join(said),
        usage=Usage(),  # nothing run yet
        background=info_of(status),
    ).wire()


def refuse_prompting(session_id: str) -> None:
    """A background session works in its worktree: a prompt from the editor would run its turn
    in the editor's workspace. Invalid params, saying how to go on with it."""
    try:
        record = bg.find(session_id)
    except KeyError:
        return
    if record.session_id == session_id:
        raise invalid(
            f"Invalid params: sessionId: {session_id} is a background session working in "
            f"{record.worktree}: go on with it there (`agentls background resume {session_id}`)"
        )


def _of_repository(root: Path) -> list[bg.BackgroundRecord]:
    try:
        repo = str(repository_root(root))
    except WorktreeError:
        return []
    return [r for r in bg.load_all() if r.repo_root == repo]


async def background_sessions(ls: AgentServer, query: str) -> list[tuple[Any, BackgroundInfo]]:
    """The workspace repository's background sessions matching query, with their state."""
    agent = await ls.agent()
    found = []
    for record in await asyncio.to_thread(_of_repository, Path(ls.root)):
        matches = await agent.search_sessions(query, cwd=record.worktree)
        for stored in matches:
            if stored.id == record.session_id:
                status = await asyncio.to_thread(bg.status, record)
                found.append((stored, info_of(status)))
    return found
