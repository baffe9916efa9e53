"""Tool names: `mcp__<server>__<tool>`, within the API's rule ^[a-zA-Z0-9_-]{1,64}$.

Each part has every other character replaced by "_"; a server name's runs of "_" become one, so
that `mcp__<server>` (a permission rule naming a server) never names part of another server. A
name longer than 64 characters, or one two tools would share once cleaned, keeps its start and
ends with a short hash of the original names, so it stays the same from run to run.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
PREFIX = "mcp__"
_BAD = re.compile(r"[^a-zA-Z0-9_-]")
_RUNS = re.compile(r"_{2,}")


def clean_server(name: str) -> str:
    cleaned = _RUNS.sub("_", _BAD.sub("_", name)).strip("_")
    return cleaned or "server"


def clean_tool(name: str) -> str:
    return _BAD.sub("_", name) or "tool"


def _hashed(base: str, server: str, tool: str) -> str:
    digest = hashlib.blake2b(f"{server}\0{tool}".encode(), digest_size=4).hexdigest()
    return base[: MAX_NAME - len(digest) - 1] + "_" + digest


def tool_name(server: str, tool: str, taken: set[str] | None = None) -> str:
    """The model-facing name of `tool` of `server` (their names as configured and listed), not one
    of `taken`."""
    name = f"{PREFIX}{clean_server(server)}__{clean_tool(tool)}"
    exact = name == f"{PREFIX}{server}__{tool}"
    if len(name) > MAX_NAME or (taken is not None and name in taken and not exact):
        name = _hashed(name, server, tool)
    return name


def server_prefix(server: str) -> str:
    """What every tool name of `server` starts with (`mcp__<server>__`)."""
    return f"{PREFIX}{clean_server(server)}__"
