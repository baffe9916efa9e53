"""The session management requests: agent/renameSession, deleteSession, forkSession,
exportSession (agent/listSessions' search is sessions.py's). Each validates its params, asks the
Agent, and answers with the protocol's result model."""

from __future__ import annotations

from typing import Any

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import invalid, known_session, parse
from agentls.protocol.models import (
    DeleteSessionParams,
    DeleteSessionResult,
    ExportSessionParams,
    ExportSessionResult,
    ForkSessionParams,
    ForkSessionResult,
    RenameSessionParams,
    RenameSessionResult,
)
from agentls.session import SessionBusyError


async def rename_session(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(RenameSessionParams, raw)
    agent = await ls.agent()
    try:
        title = await known_session(
            params.session_id, lambda sid: agent.rename_session(sid, params.title)
        )
    except ValueError as exc:
        raise invalid(f"Invalid params: title: {exc}") from None
    return RenameSessionResult(title=title).wire()


async def delete_session(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(DeleteSessionParams, raw)
    agent = await ls.agent()
    try:
        deleted = await known_session(params.session_id, agent.delete_session)
    except SessionBusyError as exc:
        raise invalid(f"Invalid params: sessionId: {exc}") from None
    return DeleteSessionResult(deleted=deleted).wire()


async def fork_session(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(ForkSessionParams, raw)
    agent = await ls.agent()
    await known_session(params.session_id, agent.session)
    try:
        record = await agent.fork_session(params.session_id, params.message_id, params.title)
    except KeyError:
        raise invalid(
            f"Invalid params: messageId: {params.message_id!r} is not in session"
            f" {params.session_id!r}"
        ) from None
    return ForkSessionResult(session_id=record.id, title=record.title).wire()


async def export_session(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(ExportSessionParams, raw)
    agent = await ls.agent()
    markdown = await known_session(params.session_id, agent.export_markdown)
    return ExportSessionResult(markdown=markdown).wire()
