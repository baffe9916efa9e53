"""`agentls run --background "…"` and `agentls background list|diff|merge|remove ID`: sessions
that run in their own git worktree and branch while the user goes on working (the core:
session/background.py).

`run --background` makes the worktree and the session, starts `agentls run --cwd WORKTREE
--session ID --json` as a detached process (its own process group, so it outlives the terminal;
its JSON lines go to a log beside the database) and returns at once. That run has no terminal: a
tool call that would ask (unless --yes was given or the permissions allow it), and ask_user, wait
for `agentls background answer ID` (cli/background_answer.py), the session "waiting" meanwhile."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agentls.cli.terminal import visible

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
GO_ON = "Go on with the task from where you stopped."
HEADER = f"{'session':<32} {'state':<10} {'cost':>10}  branch  changes  (worktree)"


def add_background_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bg = sub.add_parser(
        "background",
        help="background sessions (agentls run --background): list, answer, diff, apply, merge, "
        "resume, remove",
    )
    actions = bg.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="each one's state, cost, branch and changed files")
    listing.add_argument("--json", action="store_true", help="print JSON")
    answer = actions.add_parser("answer", help="answer the question it waits on")
    diff = actions.add_parser("diff", help="its changes against the commit it started from")
    merge = actions.add_parser(
        "merge",
        help="commit its changes on its branch, then git merge --no-ff the branch into your "
        "current branch (refused when your tree has uncommitted changes)",
    )
    merge.add_argument(
        "--include-protected",
        action="store_true",
        help="also when it changes files another program runs later (.envrc, .vscode, hooks...)",
    )
    keep = actions.add_parser(
        "apply",
        help="keep only some files: their changes applied to your tree, staged, not committed",
    )
    keep.add_argument("session", help="the session id (or its start)")
    keep.add_argument("paths", nargs="+", metavar="PATH", help="a file it changed (see diff)")
    keep.add_argument(
        "--hunk",
        type=int,
        action="append",
        default=None,
        metavar="N",
        help="with one PATH: only this hunk of it (repeatable; numbered from 0 in the order "
        "`agentls background diff` shows them)",
    )
    remove = actions.add_parser("remove", help="delete its worktree and its branch")
    remove.add_argument(
        "--force", action="store_true", help="also when its work is not merged (discarded)"
    )
    resume = actions.add_parser(
        "resume", help="go on with one that ended (a kill, a failure, or more to do), detached"
    )
    resume.add_argument("--yes", action="store_true", help="allow every call that would ask")
    for each in (answer, diff, merge, remove, resume):
        each.add_argument("session", help="the session id (or its start)")
    resume.add_argument("prompt", nargs="*", help=f'what to say (default "{GO_ON}")')


def _launcher(args: argparse.Namespace) -> Any:
    from agentls.session.background import detached_run

    def launch(record: Any) -> int:
        return detached_run(record, yes=args.yes, plan=args.plan, max_steps=args.max_steps)

    return launch


def run_background(args: argparse.Namespace) -> int:
    """`agentls run --background PROMPT`: start it, print its id, branch and worktree, return."""
    import asyncio

    from agentls.cli.workspace import workspace_settings
    from agentls.session.background import BackgroundError, start

    prompt = " ".join(args.prompt).strip()
    if not prompt:
        print("agentls: run --background needs a prompt", file=sys.stderr)
        return EXIT_USAGE
    if args.session or args.continue_ or args.retry or args.image or args.json or args.folder:
        print(
            "agentls: run --background takes a prompt and --cwd, --model, --yes, --plan, "
            "--max-steps only (it starts a new session in a new worktree)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    overrides: dict[str, Any] = {"model": args.model} if args.model else {}
    found = workspace_settings(args.cwd, overrides)
    if found is None:
        return EXIT_USAGE
    root, settings = found
    if settings.untrusted_notice:  # the repository's config: what of it is ignored
        print(settings.untrusted_notice, file=sys.stderr)
    try:
        started = asyncio.run(start(root, prompt, settings, _launcher(args), overrides))
    except BackgroundError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_FAILED
    r = started.record
    for notice in started.notices:
        print(f"agentls: {notice}", file=sys.stderr)
    print(f"session  {r.session_id}\nbranch   {r.branch}\nworktree {r.worktree}")
    asked = "--yes allows every call; " if args.yes else ""
    print(
        f"Running in the background ({asked}a question waits for `agentls background answer "
        f"{r.session_id}`). `agentls background list` shows its state; `agentls background merge "
        f"{r.session_id}` brings its work in.",
        file=sys.stderr,
    )
    return EXIT_OK


def elsewhere(session_id: str, root: Path) -> str | None:
    """Why `agentls run --session ID` must not run here: ID is a background session and root is
    not its worktree (its turn would edit this tree); None when it may."""
    from agentls.session.background import find

    try:
        record = find(session_id)
    except KeyError:
        return None
    if record.session_id != session_id or Path(record.worktree) == root.resolve():
        return None
    return (
        f"{session_id} is a background session working in {record.worktree}: "
        f"agentls run --cwd {record.worktree} --session {session_id} ..."
    )


def _changed(status: Any) -> str:
    if status.changed is None:
        return "(worktree gone)"
    if not status.changed:
        return "no changes"
    names = ", ".join(c.path for c in status.changed[:3])
    more = f" +{len(status.changed) - 3} more" if len(status.changed) > 3 else ""
    count = len(status.changed)
    return f"{count} file{'' if count == 1 else 's'}: {names}{more}"


async def _costs() -> dict[str, str]:
    from agentls.config import Settings
    from agentls.session import Agent

    agent = await Agent.open(settings=Settings(), root=os.getcwd(), watch_instructions=False)
    try:
        records = await agent.list_sessions(limit=100_000)
    finally:
        await agent.aclose()
    return _costs_of(records)


def background_lines(costs: dict[str, str]) -> list[str]:
    """The background sessions as lines: id, state, cost, branch, changed files."""
    from agentls.cli.background_answer import waiting_line
    from agentls.session.background import load_all, status

    lines = []
    for record in load_all():
        s = status(record)
        state = s.state + (f" ({s.reason})" if s.state == "failed" and s.reason else "")
        lines.append(
            f"{record.session_id:<32} {state:<10} {costs.get(record.session_id, '-'):>10}  "
            f"{record.branch}  {_changed(s)}  ({visible(record.worktree)})"
        )
        question = waiting_line(record) if s.state == "waiting" else None
        lines += [question] if question else []
    return lines


def _costs_of(records: list[Any]) -> dict[str, str]:
    return {r.id: f"{'~' if r.usage.estimated else ''}${r.usage.cost_usd:.4f}" for r in records}


def print_background(records: list[Any]) -> None:
    """`agentls sessions`' section of background sessions (none: nothing printed)."""
    lines = background_lines(_costs_of(records))
    if lines:
        print("\nBackground sessions (agentls background list):")
        print("\n".join([HEADER, *lines]))


def with_background(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`agentls sessions --json`: each background session's entry gains `background` (its state,
    branch, worktree and changed files)."""
    from agentls.session.background import load_all, status

    found = {r.session_id: r for r in load_all()}
    for item in items:
        record = found.get(str(item.get("id")))
        if record is not None:
            item["background"] = status(record).wire()
    return items


async def background_command(args: argparse.Namespace) -> int:
    from agentls.session import background as bg

    if args.action == "list":
        costs = await _costs()
        if args.json:
            from agentls.session.background_questions import waiting_questions

            items = [
                {
                    **bg.status(r).wire(),
                    "cost": costs.get(r.session_id),
                    "questions": [q.summary() for q in waiting_questions(r)],
                }
                for r in bg.load_all()
            ]
            print(json.dumps(items, indent=2))
            return EXIT_OK
        lines = background_lines(costs)
        print("\n".join([HEADER, *lines]) if lines else "No background sessions.")
        return EXIT_OK
    try:
        record = bg.find(args.session)
        if args.action == "answer":
            from agentls.cli.background_answer import answer_command

            return await answer_command(args)
        if args.action == "diff":
            from agentls.workspace.worktree import WorktreeError, diff

            if not Path(record.worktree).is_dir():
                print(f"agentls: its worktree {record.worktree} is gone", file=sys.stderr)
                return EXIT_FAILED
            try:
                sys.stdout.write(visible(diff(Path(record.worktree), record.base)))
            except WorktreeError as exc:
                print(f"agentls: {exc}", file=sys.stderr)
                return EXIT_FAILED
        elif args.action == "resume":
            from agentls.config import load_settings

            settings = load_settings(Path(record.repo_root))
            bg.resume(record, settings, " ".join(args.prompt).strip() or GO_ON, args.yes)
            print(f"resumed {record.session_id} in the background ({record.branch})")
        elif args.action == "apply":
            hunks = set(args.hunk) if args.hunk is not None else None
            for path in bg.apply(record, args.paths, hunks):
                print(f"applied {path} (staged; review it, then commit)")
        elif args.action == "merge":
            print(bg.merge(record, protected=args.include_protected))
        else:
            bg.remove(record, force=args.force)
            print(f"removed the worktree {record.worktree} and the branch {record.branch}")
    except KeyError as exc:
        print(f"agentls: {exc.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    except bg.BackgroundError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except ValueError as exc:  # the repository's configuration (resume)
        print(f"agentls: bad configuration: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
