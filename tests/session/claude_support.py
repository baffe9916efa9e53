"""A home and a workspace set up for Claude Code and opencode as users write them
(tests/session/claude_setup/): agents in ~/.claude/agents and .claude/agents, opencode's in
.opencode/agent, commands in ~/.claude/commands and .claude/commands (one in a subfolder)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SETUP = Path(__file__).parent / "claude_setup"


def claude_setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: Path) -> Path:
    """The fixture home's ~/.claude as $CLAUDE_CONFIG_DIR, the fixture workspace's files copied
    into `root`; the home's folder."""
    home = tmp_path / "claude-user-home"
    shutil.copytree(SETUP / "home", home)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    shutil.copytree(SETUP / "workspace", root, dirs_exist_ok=True)
    return home
