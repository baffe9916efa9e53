"""`agentls run --folder DIR` (repeatable): a workspace of several folders (workspace/folders.py).

The first folder is the workspace root (`--cwd` when given, else the first --folder); each other
one is as much inside: the agent reads, edits and searches it, its files named "<folder>/<path>",
its own .agentls/config.json giving the permission rules of its paths, its AGENTS.md in the
prompt. Sessions are kept under the first folder, whose config gives everything else."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentls.config import Settings
    from agentls.session import Agent


def add_folder_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--folder",
        action="append",
        default=[],
        metavar="DIR",
        help="a workspace folder (repeatable): the first is the root unless --cwd is given",
    )


def take_folders(args: argparse.Namespace) -> list[Path] | None:
    """The folders besides the root, --cwd set to the first --folder when it was not given;
    None when one is not a directory (said on stderr: a usage error)."""
    given = [Path(f).expanduser().resolve() for f in getattr(args, "folder", None) or []]
    for folder in given:
        if not folder.is_dir():
            print(f"agentls: --folder {folder} is not a directory", file=sys.stderr)
            return None
    if args.cwd is None and given:
        args.cwd = str(given.pop(0))
    return given


async def use_folders(agent: Agent, others: list[Path], *, interactive: bool) -> bool:
    """Make `others` workspace folders of the agent, each with its own config's path rules (a
    new or changed config asked about at the terminal as the root's is); False when a folder's
    config is bad (said on stderr)."""
    from agentls.cli.trust import confirm_at_terminal
    from agentls.config import load_settings
    from agentls.workspace.folders import Folders, folders_of

    if not others:
        return True
    folders = folders_of(agent.workspace)
    folders.replace(Folders.of([(None, p) for p in others]).all)
    settings: dict[Path, Settings] = {}
    for folder in folders.others:
        try:
            loaded = load_settings(folder.root, {})
        except ValueError as exc:
            print(f"agentls: bad configuration in --folder {folder.root}: {exc}", file=sys.stderr)
            return False
        settings[folder.root] = await confirm_at_terminal(
            folder.root, loaded, {}, interactive=interactive
        )
        if settings[folder.root].untrusted_notice:
            print(settings[folder.root].untrusted_notice, file=sys.stderr)
    folders.settings = settings  # their language servers (workspace/folder_languages.py)
    agent.policy.update_folders(settings)
    return True
