"""Every workspace folder of the editor (workspace/folders.py): those of initialize's
`workspaceFolders`, and those workspace/didChangeWorkspaceFolders adds or removes.

The first folder is the primary one (its config gives the session-wide settings; the sessions are
kept under it). Each other folder's .agentls/config.json is loaded as its own settings, from the
same user config and editor overrides, trusted as that file is (agentls.trust): their permission
rules judge the paths in that folder (session/folder_access.py)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from agentls.config import Settings, load_settings
from agentls.lsp.agent_server import AgentServer
from agentls.workspace.folders import Folders

log = logging.getLogger(__name__)


def _entries(folders: Sequence[types.WorkspaceFolder] | None) -> list[tuple[str | None, Path]]:
    out: list[tuple[str | None, Path]] = []
    for folder in folders or []:
        path = to_fs_path(folder.uri) if folder.uri.startswith("file:") else None
        if path:
            out.append((folder.name, Path(path)))
        else:  # a folder of another scheme (a remote one) has no files here
            log.warning("workspace folder %s is not a local folder; left out", folder.uri)
    return out


def initial_folders(params: types.InitializeParams, primary: Path) -> Folders:
    """The folders of initialize: `primary` (lsp/settings.py workspace_root) first, then every
    other workspace folder in the editor's order."""
    entries = _entries(params.workspace_folders)
    first_name = entries[0][0] if entries else None
    return Folders.of([(first_name, primary), *entries])


def folder_settings(ls: AgentServer, overrides: dict[str, Any]) -> dict[Path, Settings]:
    """Each folder but the first, with its own config file's settings. Raises ValueError naming
    the folder whose config is bad."""
    out: dict[Path, Settings] = {}
    for folder in ls.folders.others:
        try:
            out[folder.root] = load_settings(
                folder.root, overrides, workspace_trusted=ls.workspace_trusted, editor=True
            )
        except Exception as exc:
            raise ValueError(f"workspace folder {folder.name} ({folder.root}): {exc}") from exc
    ls.folders.settings = out  # their language servers (workspace/folder_languages.py)
    return out


def hand_to_agent(ls: AgentServer) -> None:
    """The folders' settings to the running agent (counted from its next tool call on)."""
    if ls.running_agent is not None:
        ls.running_agent.policy.update_folders(ls.folder_settings)


def change_folders(ls: AgentServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    """workspace/didChangeWorkspaceFolders: the folders added are inside from now on, those
    removed no longer (but the first: see Folders.change)."""
    event = params.event
    removed = [path for _, path in _entries(event.removed)]
    for problem in ls.folders.change(_entries(event.added), removed):
        ls.show_message(f"agentls: {problem}", types.MessageType.Warning)
