"""`agentls review --session S`: the agent's edits pending review (the `review: "after"` setting,
or `agentls run --review after`), each file with its hunks; `--keep PATH` / `--undo PATH` (all of
it, or `--hunk N` ...), `--keep-all`. An undo writes the file back on disk, merged into what the
user changed since on other lines; lines both changed are a conflict, left as they are. Through
the Agent (session/review.py)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from agentls.cli.terminal import visible

if TYPE_CHECKING:
    from agentls.events import ReviewFile
    from agentls.protocol.review import RevertConflict
    from agentls.session import Agent

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def add_review_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], run: argparse.ArgumentParser
) -> None:
    """`agentls review` and `agentls run --review`."""
    run.add_argument(
        "--review",
        choices=["before", "after"],
        default=None,
        help='"after": edits that would ask are applied at once, kept pending (agentls review)',
    )
    review = sub.add_parser(
        "review", help='the agent\'s edits pending review (review "after"): list, keep, undo'
    )
    review.add_argument("--session", required=True, help="the session id")
    review.add_argument("--cwd", default=None, help="the workspace (default: the session's)")
    action = review.add_mutually_exclusive_group()
    action.add_argument("--keep", metavar="PATH", help="keep PATH's change (or its --hunk N)")
    action.add_argument("--undo", metavar="PATH", help="undo PATH's change (or its --hunk N)")
    action.add_argument("--keep-all", action="store_true", help="keep every pending change")
    review.add_argument(
        "--hunk", type=int, action="append", metavar="N", help="only hunk N (repeatable)"
    )
    review.add_argument("--json", action="store_true", help="print JSON")
    review.set_defaults(handler=review_command)


async def review_command(args: argparse.Namespace) -> int:
    from agentls.cli.workspace import workspace_settings
    from agentls.session import Agent

    if args.hunk and not (args.keep or args.undo):
        print("agentls: --hunk goes with --keep PATH or --undo PATH", file=sys.stderr)
        return EXIT_USAGE
    # Paths the user typed are from here; the workspace is the session's unless --cwd names one.
    target = os.path.abspath(args.keep or args.undo) if (args.keep or args.undo) else None
    cwd = args.cwd
    while True:
        found = workspace_settings(cwd)
        if found is None:
            return EXIT_USAGE
        root, settings = found
        agent = await Agent.open(settings=settings, root=root, watch_instructions=False)
        try:
            state = await agent.session(args.session)
        except KeyError as exc:
            await agent.aclose()
            print(f"agentls: {exc.args[0]}", file=sys.stderr)
            return EXIT_USAGE
        session_root = state.record.cwd
        if cwd is None and os.path.realpath(session_root) != str(root):
            await agent.aclose()
            cwd = session_root
            continue
        break
    try:
        return await _review(agent, args, target)
    finally:
        await agent.aclose()


async def _review(agent: Agent, args: argparse.Namespace, target: str | None) -> int:
    from agentls.session.review import ReviewFailed

    sid = args.session
    conflicts: list[RevertConflict] = []
    try:
        if args.keep_all:
            for file in await agent.list_review(sid):
                files, _ = await agent.review(sid, file.path, "keep")
        elif target is not None:
            action = "keep" if args.keep else "undo"
            files, conflict = await agent.review(sid, target, action, args.hunk)
            if conflict is not None:
                conflicts.append(conflict)
        files = await agent.list_review(sid)
    except ValueError as exc:
        print(f"agentls: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except ReviewFailed as exc:
        print(f"agentls: {visible(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        import json

        out = {"files": [f.wire() for f in files], "conflicts": [c.wire() for c in conflicts]}
        print(json.dumps(out))
    else:
        _print(agent, files, conflicts)
    return EXIT_FAILED if conflicts else EXIT_OK


def _print(agent: Agent, files: list[ReviewFile], conflicts: list[RevertConflict]) -> None:
    def shown(path: str) -> str:
        rel = os.path.relpath(path, agent.root)
        return visible(path if rel.startswith("..") else rel)

    for conflict in conflicts:
        print(
            f"conflict: {shown(conflict.path)} changed since the agent's edit; nothing was written",
            file=sys.stderr,
        )
    if not files:
        print("nothing pending review")
        return
    for file in files:
        created = " (new file)" if file.base is None else ""
        count = len(file.hunks)
        print(f"{shown(file.path)}{created}: {count} hunk{'' if count == 1 else 's'}")
        for hunk in file.hunks:
            print(f"  hunk {hunk.index}")
            for line in hunk.diff.splitlines():
                print("    " + visible(line))
