"""Where the user's own agentls files live: $XDG_CONFIG_HOME/agentls, else ~/.config/agentls
(config.json, trusted-workspaces.json, AGENTS.md)."""

from __future__ import annotations

import os
from pathlib import Path


def config_home() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentls"


def claude_home() -> Path:
    """Claude Code's user folder, whose skills, agents, commands, settings and hooks agentls
    reads as well: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"
