"""What the workspace commands (run, commands, mcp list) start from: the folder `--cwd` names
and its settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentls.config import Settings


def workspace_settings(
    cwd: str | None, overrides: dict[str, Any] | None = None
) -> tuple[Path, Settings] | None:
    """(root, settings) for `--cwd` (else the current directory); None when the folder or its
    configuration is unusable, said on stderr (the command exits 2)."""
    from agentls.config import load_settings

    root = Path(cwd or os.getcwd()).resolve()
    if not root.is_dir():
        print(f"agentls: --cwd {root} is not a directory", file=sys.stderr)
        return None
    try:
        return root, load_settings(root, overrides)
    except ValueError as exc:
        print(f"agentls: bad configuration: {exc}", file=sys.stderr)
        return None
