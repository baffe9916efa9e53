"""`agentls skills`: the skills the agent can load here (session/skills.py), where each comes
from, what its allowed-tools allow, and the SKILL.md files that could not be used."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.cli.terminal import visible

if TYPE_CHECKING:
    from agentls.config import Settings


def add_skills_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    skills = sub.add_parser(
        "skills", help="the skills the agent can load (SKILL.md folders), and where each is"
    )
    skills.add_argument("--cwd", default=None, help="the workspace (default: here)")
    skills.add_argument("--json", action="store_true", help="print JSON")


def skills_command(args: argparse.Namespace) -> int:
    from agentls.cli.workspace import workspace_settings
    from agentls.session.skills import available_skills, has_workspace_skills

    found = workspace_settings(args.cwd)
    if found is None:
        return 2
    root, settings = found
    skills, problems = available_skills(root, settings.workspace_trusted)
    if args.json:
        listed = {"skills": [s.wire() for s in skills.values()], "problems": problems}
        print(json.dumps(listed, indent=2, ensure_ascii=False))
        return 0
    if not skills:
        print("No skills. Put a folder with a SKILL.md in ~/.claude/skills, ~/.agents/skills or")
        print("~/.config/agentls/skills (or, in a trusted workspace, its .claude/skills, ...).")
    for skill in skills.values():
        print(f"{skill.name}  ({skill.source}: {visible(str(skill.file))})")
        print(f"    {visible(skill.description)}")
        if skill.allowed_tools:
            print(f"    allows while in use: {visible(', '.join(skill.allowed_tools))}")
        for problem in skill.problems:
            print(f"    note: {visible(problem)}")
    for problem in problems:
        print(f"not used: {visible(problem)}", file=sys.stderr)
    if not settings.workspace_trusted and has_workspace_skills(root):
        print(
            "This workspace has skills of its own that do not count until you trust it "
            "(`agentls trust`).",
            file=sys.stderr,
        )
    return 0


def say_untrusted_skills(root: Path, settings: Settings) -> None:
    """On stderr, when the workspace has skills of its own that do not count (not trusted)."""
    from agentls.session.skills import has_workspace_skills

    if not settings.workspace_trusted and has_workspace_skills(root):
        print(
            f"agentls: the skills of {visible(str(root))} (.claude/skills, ...) are not used "
            "until you trust this workspace (`agentls trust`)",
            file=sys.stderr,
        )
