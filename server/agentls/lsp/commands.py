"""agent/listCommands: the commands a prompt "/NAME args" runs (the panel's completion)."""

from __future__ import annotations

from typing import Any

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import parse
from agentls.protocol.models import CommandInfo, ListCommandsParams, ListCommandsResult


async def list_commands(ls: AgentServer, raw: Any) -> dict[str, Any]:
    parse(ListCommandsParams, raw)
    agent = await ls.agent()
    commands = [
        CommandInfo(name=c.name, description=c.description, source=c.source, agent=c.agent)
        for c in agent.list_commands().values()
    ]
    return ListCommandsResult(commands=commands).wire()
