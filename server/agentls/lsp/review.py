"""Review "after" requests: agent/listReview (the files pending review, with their hunks) and
agent/review (keep or undo a file, or some of its hunks; an undo is a workspace edit the editor
applies, merged into what the user changed since; lines both changed are a conflict, never
overwritten).
Each validates its params, asks the Agent (session/review.py) and answers with the result model.
Paths are absolute; agent/review also takes one relative to the workspace, or a file URI."""

from __future__ import annotations

from typing import Any

from pygls.uris import to_fs_path

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import invalid, known_session, parse, request_failed
from agentls.protocol.review import (
    ListReviewParams,
    ListReviewResult,
    ReviewParams,
    ReviewResult,
)
from agentls.session.review import ReviewFailed


async def list_review(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(ListReviewParams, raw)
    agent = await ls.agent()
    files = await known_session(params.session_id, agent.list_review)
    return ListReviewResult(files=files).wire()


async def review(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(ReviewParams, raw)
    agent = await ls.agent()
    await known_session(params.session_id, agent.session)
    path = params.path
    if path.startswith("file:"):
        path = to_fs_path(path) or path
    try:
        files, conflict = await agent.review(params.session_id, path, params.action, params.hunks)
    except ValueError as exc:
        raise invalid(f"Invalid params: {exc}") from None
    except ReviewFailed as exc:
        raise request_failed(str(exc)) from None
    return ReviewResult(files=files, conflict=conflict).wire()
