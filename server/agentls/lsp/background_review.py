"""agent/backgroundDiff, backgroundApply and backgroundRemove: the panel's review of a finished
background session (session/background_review.py), for the workspace's repository only."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import invalid, parse
from agentls.protocol.background_review import (
    AppliedFile,
    BackgroundApplyParams,
    BackgroundApplyResult,
    BackgroundDiffParams,
    BackgroundDiffResult,
    BackgroundFile,
    BackgroundRemoveParams,
    BackgroundRemoveResult,
    ConflictFile,
    ConflictMerge,
)
from agentls.session import background as bg
from agentls.session import background_review as review
from agentls.workspace.worktree import WorktreeError, repository_root


def _record(ls: AgentServer, session_id: str) -> bg.BackgroundRecord:
    """The background session of this workspace's repository; Invalid params naming sessionId."""
    try:
        record = bg.find(session_id)
    except KeyError as exc:
        raise invalid(f"Invalid params: sessionId: {exc.args[0]}") from None
    try:
        repo = str(repository_root(Path(ls.root)))
    except WorktreeError:
        repo = None
    if record.repo_root != repo:
        raise invalid(
            f"Invalid params: sessionId: {session_id} is a background session of "
            f"{record.repo_root}, not of this workspace's repository"
        )
    return record


async def background_diff(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(BackgroundDiffParams, raw)
    record = _record(ls, params.session_id)
    try:
        files = await asyncio.to_thread(review.branch_files, record)
    except bg.BackgroundError as exc:
        raise invalid(f"Invalid params: sessionId: {exc}") from None
    state = (await asyncio.to_thread(bg.state_of, record))[0]
    return BackgroundDiffResult(
        state=state,
        branch=record.branch,
        base=record.base,
        files=[
            BackgroundFile(
                path=f.path,
                base=f.base,
                branch=f.branch,
                binary=f.binary,
                hunks=f.wire_hunks(),
            )
            for f in files
        ],
    ).wire()


async def background_apply(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(BackgroundApplyParams, raw)
    record = _record(ls, params.session_id)
    keep: dict[str, list[int] | None] = {}
    for item in params.keep:
        if item.path in keep:
            raise invalid(f"Invalid params: keep: {item.path} is named twice")
        keep[item.path] = item.hunks
    agent = await ls.agent()
    try:
        brought = await review.bring_in(record, keep, agent.workspace)
    except bg.BackgroundError as exc:
        raise invalid(f"Invalid params: sessionId: {exc}") from None
    except ValueError as exc:
        raise invalid(f"Invalid params: keep: {exc}") from None
    return BackgroundApplyResult(
        applied=[AppliedFile(path=p, hunks=h) for p, h in brought.applied.items()],
        conflicts=[
            ConflictFile(path=p, hunks=h, reason=why, merge=_merge_of(brought.merges.get(p)))
            for p, h, why in brought.conflicts
        ],
    ).wire()


def _merge_of(texts: review.ConflictTexts | None) -> ConflictMerge | None:
    if texts is None:
        return None
    uri = from_fs_path(str(texts.target)) or texts.target.as_uri()
    return ConflictMerge(
        uri=uri, base=texts.base, yours=texts.yours, theirs=texts.theirs, marked=texts.marked
    )


async def background_remove(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(BackgroundRemoveParams, raw)
    record = _record(ls, params.session_id)
    try:
        await asyncio.to_thread(review.remove, record, params.force)
    except bg.BackgroundError as exc:
        field = "sessionId" if "still running" in str(exc) else "force"
        raise invalid(f"Invalid params: {field}: {exc}") from None
    return BackgroundRemoveResult(removed=True).wire()
