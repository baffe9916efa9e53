"""`agentls mcp list`: the MCP servers this workspace would use, each started to show its state
and tools (and stopped again)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


async def mcp_command(args: argparse.Namespace) -> int:
    from agentls.cli.workspace import workspace_settings
    from agentls.session import Agent

    found = workspace_settings(args.cwd)
    if found is None:
        return EXIT_USAGE
    root, settings = found
    if settings.untrusted_notice:
        print(settings.untrusted_notice, file=sys.stderr)
    agent = await Agent.open(settings=settings, root=root, watch_instructions=False)
    try:
        servers = await agent.mcp_status(start=True)
    finally:
        await agent.aclose()
    if args.json:
        from agentls.protocol.models import McpServerInfo

        infos = [McpServerInfo.model_validate(dataclasses.asdict(s)).wire() for s in servers]
        print(json.dumps(infos, indent=2))
        return EXIT_OK
    if not servers:
        print(
            "No MCP servers configured (mcpServers in ~/.config/agentls/config.json, or in a "
            "trusted workspace's .mcp.json or .agentls/config.json)."
        )
        return EXIT_OK
    for server in servers:
        where = f"  ({server.transport}: {server.target})" if server.target else ""
        print(f"{server.name}  {server.status}{where}")
        if server.error:
            for line in server.error.splitlines():
                print(f"    {line}")
        for tool in server.tools:
            hint = "  [says read-only]" if tool.read_only_hint else ""
            print(f"    {tool.name}{hint}")
    return EXIT_OK if all(s.status == "running" for s in servers) else EXIT_FAILED
