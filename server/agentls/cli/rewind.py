"""`agentls rewind --session S`: back to a checkpoint (one of the user's messages), from the
terminal, through the Agent (session/revert.py).

Without --to it lists the user's messages, numbered, with what going back to each would restore.
`--to N` goes back to just before message N: its files (`--scope code`), its conversation
(`conversation`) or both (the default); `--dry-run` only says what it would do. A file changed
since the agent's edit is a conflict, left as it is: its three versions (before the agent, the
agent's, now) are written to a temporary folder for a merge. `--redo` redoes the last rewind,
while no prompt has been sent since. Exit status 1 when a file was left as a conflict or the
files could not be written, 2 for a usage error."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.cli.terminal import visible

if TYPE_CHECKING:
    from agentls.session import Agent
    from agentls.session.revert import Conflict

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def add_rewind_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rewind = sub.add_parser(
        "rewind", help="go back to one of your messages: its files, its conversation, or both"
    )
    rewind.add_argument("--session", required=True, help="the session id")
    target = rewind.add_mutually_exclusive_group()
    target.add_argument(
        "--to", type=int, metavar="N", help="go back to just before message N (as listed)"
    )
    target.add_argument("--redo", action="store_true", help="redo the last rewind")
    rewind.add_argument("--scope", choices=["code", "conversation", "both"], default="both")
    rewind.add_argument("--dry-run", action="store_true", help="only say what it would do")
    rewind.set_defaults(handler=rewind_command)


async def rewind_command(args: argparse.Namespace) -> int:
    from agentls.config import Settings
    from agentls.session import Agent, SessionBusyError
    from agentls.session.revert import NothingToRedo, checkpoints_of

    # The defaults, not a workspace's settings: restoring files runs nothing of a workspace.
    agent = await Agent.open(settings=Settings(), root=os.getcwd(), watch_instructions=False)
    try:
        checkpoints = checkpoints_of(await agent.history(args.session))
        if args.redo:
            return await _redo(agent, args.session)
        if args.to is None:
            return await _list(agent, args.session, args.scope, [m.id for m in checkpoints])
        if not 1 <= args.to <= len(checkpoints):
            count = len(checkpoints)
            print(f"agentls: --to {args.to}: the messages are 1 to {count}", file=sys.stderr)
            return EXIT_USAGE
        return await _rewind(agent, args, checkpoints[args.to - 1].id)
    except KeyError as exc:
        print(f"agentls: {visible(str(exc.args[0]))}", file=sys.stderr)
        return EXIT_USAGE
    except (SessionBusyError, NothingToRedo) as exc:
        print(f"agentls: {visible(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        await agent.aclose()


async def _list(agent: Agent, session_id: str, scope: str, ids: list[str]) -> int:
    from agentls.session import SessionBusyError
    from agentls.session.revert import checkpoints_of

    checkpoints = {m.id: m for m in checkpoints_of(await agent.history(session_id))}

    if not ids:
        print("no messages yet")
    previews = {}
    try:
        for message_id in ids:
            previews[message_id] = await agent.revert(session_id, message_id, scope, dry_run=True)
    except SessionBusyError as exc:  # a turn runs: the list still shows, without what each does
        previews = {}
        print(f"agentls: {visible(str(exc))}; not saying what each restores", file=sys.stderr)
    for number, message_id in enumerate(ids, 1):
        message = checkpoints[message_id]
        first = (message.text().strip().splitlines() or ["(no text)"])[0]
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(message.created_at / 1000))
        reverted = " (reverted)" if message.reverted else ""
        print(f"{number:>3}  {when}  {visible(first[:72])}{reverted}")
        preview = previews.get(message_id)
        if preview is None:
            continue
        what = [f"restores {_names(agent, preview.files)}"] if preview.files else []
        if preview.conflicts:
            what.append(f"conflicts {_names(agent, [c.path for c in preview.conflicts])}")
        if preview.bash_commands:
            what.append(f"{len(preview.bash_commands)} bash command(s) not undone")
        if what:
            print("       " + "; ".join(what))
    return EXIT_OK


async def _rewind(agent: Agent, args: argparse.Namespace, message_id: str) -> int:
    outcome = await agent.revert(args.session, message_id, args.scope, args.dry_run)
    if outcome.problems:
        print(
            "agentls: nothing was rewound: " + visible("; ".join(outcome.problems)), file=sys.stderr
        )
        return EXIT_FAILED
    would = "would restore" if args.dry_run else "restored"
    for path in outcome.files:
        print(f"{would}: {_names(agent, [path])}")
    _conflicts(agent, outcome.conflicts, write=not args.dry_run)
    for command in outcome.bash_commands:
        print(f"not undone (bash): {visible(command)}")
    if outcome.prompt is not None:
        dropped = "would drop" if args.dry_run else "dropped"
        print(f"{dropped} the conversation from your message:")
        for line in outcome.prompt.splitlines() or [""]:
            print("  " + visible(line))
    if not (outcome.files or outcome.conflicts or outcome.prompt is not None):
        print("nothing to restore")
    return EXIT_FAILED if outcome.conflicts else EXIT_OK


async def _redo(agent: Agent, session_id: str) -> int:
    outcome = await agent.unrevert(session_id)
    if outcome.problems:
        print(
            "agentls: nothing was redone: " + visible("; ".join(outcome.problems)), file=sys.stderr
        )
        return EXIT_FAILED
    for path in outcome.files:
        print(f"put back: {_names(agent, [path])}")
    _conflicts(agent, outcome.conflicts, write=True)
    if outcome.message_ids:
        print(f"{len(outcome.message_ids)} message(s) back in the conversation")
    return EXIT_FAILED if outcome.conflicts else EXIT_OK


def _conflicts(agent: Agent, conflicts: list[Conflict], *, write: bool) -> None:
    """Say each conflict; with write, put its three versions in a new temporary folder."""
    if not conflicts:
        return
    folder = Path(tempfile.mkdtemp(prefix="agentls-rewind-")) if write else None
    for number, conflict in enumerate(conflicts, 1):
        print(f"conflict: {_names(agent, [conflict.path])} changed since; left as it is")
        if folder is None:
            continue
        name = _names(agent, [conflict.path]).replace(os.sep, "__")
        if len(name.encode()) > 200:  # a file name holds 255 bytes: its number and last part
            last = f"{number}-{visible(os.path.basename(conflict.path))}"
            name = last.encode()[:200].decode(errors="ignore")
        for label, content in (
            ("before", conflict.before),
            ("agent", conflict.agent),
            ("current", conflict.current),
        ):
            if content is None:
                print(f"  {label}: (did not exist)")
                continue
            copy = folder / f"{name}.{label}"
            copy.write_text(content, encoding="utf-8")
            print(f"  {label}: {visible(str(copy))}")


def _names(agent: Agent, paths: list[str]) -> str:
    def shown(path: str) -> str:
        rel = os.path.relpath(path, agent.root)
        return visible(path if rel.startswith("..") else rel)

    return ", ".join(shown(p) for p in paths)
