"""`agentls hooks`: the hooks that run in this workspace (Claude Code's settings format: the
user's ~/.claude/settings.json and agentls config, the workspace's files when it is trusted),
each with its event, matcher, command, timeout and the file it comes from; the workspace files
whose hooks are ignored are said on stderr."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_USAGE = 2


def add_hooks_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hooks = sub.add_parser("hooks", help="the hooks that run here, with the files they come from")
    hooks.add_argument("--cwd", default=None, help="the workspace (default: here)")
    hooks.add_argument("--json", action="store_true", help="print JSON")
    hooks.set_defaults(handler=hooks_command)


async def hooks_command(args: argparse.Namespace) -> int:
    from agentls.cli.workspace import workspace_settings
    from agentls.hooks.config import load_hooks

    found = workspace_settings(args.cwd)
    if found is None:
        return EXIT_USAGE
    root, settings = found
    loaded = load_hooks(settings, root)
    for notice in loaded.notices:
        print(notice, file=sys.stderr)
    if args.json:
        rows = [
            {
                "event": h.event,
                "matcher": h.matcher,
                "command": h.command,
                "timeoutS": h.timeout_s,
                "source": str(h.source),
            }
            for h in loaded.hooks
        ]
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    if not loaded.hooks:
        print("No hooks.")
        return EXIT_OK
    for hook in loaded.hooks:
        matcher = f" [{hook.matcher}]" if hook.matcher else ""
        print(f"{hook.event}{matcher}: {hook.command}  (timeout {hook.timeout_s:g} s)")
        print(f"    from {hook.source}")
    return EXIT_OK


def hook_line(event: Any) -> str:
    """A hook's run in one line (session/hooks.py summary)."""
    from agentls.session.hooks import summary

    return summary(event)


def trust_hook_files(store: Any, root: Path) -> list[Path]:
    """`agentls trust DIR`: confirm the workspace's Claude Code settings files (their hooks run
    only in a content confirmed), showing each one's change and the hooks it holds; the files
    confirmed."""
    from agentls.cli.terminal import visible
    from agentls.config_files import parse_json_object, read_workspace_bytes
    from agentls.hooks.config import claude_workspace_files, parse_hooks
    from agentls.trust_pending import pending_config

    trusted: list[Path] = []
    for file in claude_workspace_files(root):
        try:
            data = read_workspace_bytes(file)
            if data is None:
                continue
            hooks = parse_hooks(file, parse_json_object(file, data).get("hooks"))
        except ValueError as exc:
            print(f"agentls: not trusted: {exc}", file=sys.stderr)
            continue
        pending = pending_config(store, file, "config", data)
        if pending is not None:
            print(visible(pending.diff()), end="")
        store.trust(file, data)
        trusted.append(file)
        print(f"Trusted: {file} (this exact content; an edit needs trusting again)")
        for hook in hooks:
            matcher = f" [{hook.matcher}]" if hook.matcher else ""
            print(f"  hook {hook.event}{matcher}: {hook.command}")
    return trusted
