"""session/new's and session/load's `additionalDirectories` (ACP: more workspace roots for the
session, `cwd` staying the base of relative paths): each becomes a workspace folder of the agent
of that cwd (workspace/folders.py), inside as `cwd` is, its files named "<folder>/<path>", its
own .agentls/config.json giving the permission rules of its paths, its AGENTS.md in the prompt.

The folders are the agent's, not one session's: once a session of this connection added one, it
counts for every session of that cwd here until the connection ends."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from acp import RequestError

from agentls.config import Settings, load_settings
from agentls.session import Agent
from agentls.workspace.folders import folders_of


def _invalid(detail: str) -> RequestError:
    return RequestError.invalid_params({"field": "additionalDirectories", "message": detail})


def checked_directories(raw: Any) -> list[Path]:
    """The directories asked for, each absolute and a directory; Invalid params naming the field
    otherwise."""
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(d, str) for d in raw):
        raise _invalid("must be a list of absolute paths")
    out: list[Path] = []
    for directory in raw:
        if not os.path.isabs(directory):
            raise _invalid(f"must be absolute paths (got {directory!r})")
        if not os.path.isdir(directory):
            raise _invalid(f"{directory} is not a directory")
        out.append(Path(os.path.realpath(directory)))
    return out


def add_folders(agent: Agent, directories: list[Path], overrides: dict[str, Any]) -> list[str]:
    """Make `directories` workspace folders of `agent` with their own configs' path rules;
    returns the notices of their untrusted configs (said to the session)."""
    if not directories:
        return []
    folders = folders_of(agent.workspace)
    folders.change([(None, d) for d in directories], [])
    settings: dict[Path, Settings] = {}
    notices: list[str] = []
    for folder in folders.others:
        try:
            settings[folder.root] = load_settings(folder.root, overrides)
        except ValueError as exc:
            raise _invalid(f"{folder.root}: bad configuration: {exc}") from None
        notice = settings[folder.root].untrusted_notice
        if notice:
            notices.append(notice)
    folders.settings = settings  # their language servers (workspace/folder_languages.py)
    agent.policy.update_folders(settings)
    return notices
