"""`agentls agents`: the sub-agent types the task tool can start in this workspace (the built-in
`general`, Claude Code's and opencode's agent files, the `agents` setting: session/agent_files.py
and subagents.py), each with the file it comes from, its tools and model; the agent files that
could not be used, and a workspace's that do not count until it is trusted, on stderr."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentls.config import Settings

EXIT_OK = 0
EXIT_USAGE = 2


def add_agents_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    agents = sub.add_parser(
        "agents", help="the sub-agent types the task tool can start, and where each comes from"
    )
    agents.add_argument("--cwd", default=None, help="the workspace (default: here)")
    agents.add_argument("--json", action="store_true", help="print JSON")
    agents.set_defaults(handler=agents_command)


def agent_rows(settings: Settings, root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Each agent type as a row (name, description, source, file, tools, model), and the
    problems of the files not used."""
    from agentls.session.agent_files import ALL_TOOLS, available_agents
    from agentls.session.subagents import agent_types

    files = available_agents(settings, root)
    configured = settings.agents or {}
    rows: list[dict[str, Any]] = []
    for name, kind in agent_types(configured, files.types).items():
        file = files.files.get(name)
        if name in configured:
            source, file = "setting", None
        elif file is not None:
            source = "workspace" if root in file.parents else "user"
        else:
            source = "builtin"  # DEFAULT_AGENT
        if kind.tools is None:
            tools = "read-only tools"
        elif kind.tools == [ALL_TOOLS]:
            tools = "the session's tools"
        else:
            tools = ", ".join(kind.tools)
        rows.append(
            {
                "name": name,
                "description": kind.description,
                "source": source,
                "file": str(file) if file is not None else None,
                "tools": tools,
                "model": kind.model,
            }
        )
    return rows, list(files.problems.values())


async def agents_command(args: argparse.Namespace) -> int:
    from agentls.cli.terminal import visible
    from agentls.cli.workspace import workspace_settings

    found = workspace_settings(args.cwd)
    if found is None:
        return EXIT_USAGE
    root, settings = found
    rows, problems = agent_rows(settings, root)
    if args.json:
        print(json.dumps({"agents": rows, "problems": problems}, indent=2, ensure_ascii=False))
        return EXIT_OK
    for row in rows:
        where = f"{row['source']}: {row['file']}" if row["file"] else row["source"]
        if row["source"] == "setting":
            where = "the `agents` setting"
        print(visible(f"{row['name']}  ({where})"))
        if row["description"]:
            print(visible(f"    {' '.join(row['description'].split())[:200]}"))
        model = row["model"] or "the session's"
        print(visible(f"    tools: {row['tools']}; model: {model}"))
    for problem in problems:
        print(f"not used: {visible(problem)}", file=sys.stderr)
    unused = [
        d
        for d in (root / ".claude" / "agents", root / ".opencode" / "agent")
        if d.is_dir() and not settings.workspace_trusted
    ]
    if unused:
        print(
            f"(the agents of {' and '.join(map(str, unused))} are not used: this workspace is "
            f"not trusted; `agentls trust {root}` trusts it)",
            file=sys.stderr,
        )
    return EXIT_OK
