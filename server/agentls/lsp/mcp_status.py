"""agent/mcpStatus: the workspace's MCP servers, their state and tools (the panel's list)."""

from __future__ import annotations

import dataclasses
from typing import Any

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import parse
from agentls.protocol.models import McpServerInfo, McpStatusParams, McpStatusResult


async def mcp_status(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(McpStatusParams, raw)
    agent = await ls.agent()
    servers = await agent.mcp_status(start=params.start)
    infos = [McpServerInfo.model_validate(dataclasses.asdict(s)) for s in servers]
    return McpStatusResult(servers=infos).wire()
