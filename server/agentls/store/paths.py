"""Where the database lives: $AGENTLS_DATA_DIR, else the XDG data directory."""

from __future__ import annotations

import os
from pathlib import Path

DB_FILENAME = "agentls.db"


def default_data_dir() -> Path:
    """$AGENTLS_DATA_DIR, else $XDG_DATA_HOME/agentls, else ~/.local/share/agentls."""
    explicit = os.environ.get("AGENTLS_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "agentls"
    return Path.home() / ".local" / "share" / "agentls"


def default_db_path() -> Path:
    return default_data_dir() / DB_FILENAME
