"""`agentls commands`: the commands a prompt "/NAME args" runs in this workspace (`agentls run
"/NAME args"`, the panel's completion)."""

from __future__ import annotations

import argparse
import json
import sys

EXIT_OK = 0
EXIT_USAGE = 2


async def commands_command(args: argparse.Namespace) -> int:
    from agentls.cli.workspace import workspace_settings
    from agentls.session import Agent

    found = workspace_settings(args.cwd)
    if found is None:
        return EXIT_USAGE
    root, settings = found
    agent = await Agent.open(settings=settings, root=root, watch_instructions=False)
    try:
        commands = list(agent.list_commands().values())
    finally:
        await agent.aclose()
    if args.json:
        rows = [
            {"name": c.name, "description": c.description, "source": c.source, "agent": c.agent}
            for c in commands
        ]
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    width = max(len(c.name) for c in commands) + 1
    for command in commands:
        as_agent = f", as {command.agent}" if command.agent else ""
        print(f"/{command.name:<{width}} {command.description}  ({command.source}{as_agent})")
    unused = [
        d for d in (root / ".agentls" / "commands", root / ".claude" / "commands") if d.is_dir()
    ]
    if not settings.workspace_trusted and unused:
        print(
            f"(the commands of {' and '.join(map(str, unused))} are not used: this workspace is "
            f"not trusted; `agentls trust {root}` trusts its .agentls/config.json)",
            file=sys.stderr,
        )
    return EXIT_OK
