"""`agentls permissions import [--dry-run] [--cwd DIR]`: Claude Code's permission rules (the user's
~/.claude settings and the workspace's .claude settings) written as agentls rules, each shown
with what it became, and every entry that could not be translated with the reason
(agentls.claude_permissions)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agentls.claude_permissions import (
    ImportPlan,
    ImportProblem,
    Target,
    describe_rule,
    plan_import,
    write_target,
)
from agentls.cli.terminal import visible

EXIT_OK = 0
EXIT_USAGE = 2


def _home_short(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text == home or text.startswith(home + os.sep) else text


def _print_plan(plan: ImportPlan) -> None:
    print("Claude Code's permission rules, from " + ", ".join(map(_home_short, plan.sources)) + ":")
    if not plan.translated:
        print("  (none translated)")
    for t in plan.translated:
        what = ", ".join(describe_rule(r) for r in t.rules)
        print(f"  {t.entry.kind:<5} {visible(t.entry.text)}  ->  {what}")
        if t.note:
            print(f"        {t.note}")
    if plan.skipped:
        print("Not translated (nothing written for these):")
        for s in plan.skipped:
            print(f"  {visible(s.text)}  ({_home_short(s.source)}): {s.reason}")


def _print_target(target: Target, dry_run: bool) -> None:
    verb = "Would write" if dry_run else "Wrote"
    print(
        f"{verb} {_home_short(target.path)}: {len(target.added)} rule(s) added after "
        f"the {len(target.before)} there"
    )
    for rule in target.added:
        print(f"  + {describe_rule(rule)}")
    if target.already:
        print(f"  {len(target.already)} imported rule(s) already there, left where they are")
    if target.restated:
        print(
            "  written again after them, so that your stricter rules still win: "
            + ", ".join(describe_rule(r) for r in target.restated)
        )
    if target.converted:
        print("  (its {tool: action} permissions are written as a list of rules, same meaning)")
    if target.level == "workspace":
        root = target.path.parent.parent
        print(
            "  This workspace's permissions replace yours there, so yours come first. Its allow "
            f"rules count once you confirm the file: agentls trust {_home_short(root)}"
        )


def run_import(args: argparse.Namespace) -> int:
    workspace = Path(os.path.realpath(args.cwd or os.getcwd()))
    try:
        plan = plan_import(workspace)
    except ImportProblem as exc:
        print(f"agentls: {exc}; nothing imported", file=sys.stderr)
        return EXIT_USAGE
    if not plan.sources:
        print(
            "No Claude Code settings found (~/.claude/settings.json, settings.local.json, "
            f"{_home_short(workspace)}/.claude/settings.json, settings.local.json)."
        )
        return EXIT_OK
    _print_plan(plan)
    if not plan.targets:
        print("Nothing new to write: your agentls rules already hold these.")
        return EXIT_OK
    for target in plan.targets:
        if not args.dry_run:
            try:
                write_target(target)
            except OSError as exc:
                print(f"agentls: cannot write {target.path}: {exc}", file=sys.stderr)
                return 1
        _print_target(target, args.dry_run)
    if args.dry_run:
        print("Dry run: nothing written.")
    return EXIT_OK
