"""Tool names: `mcp__<server>__<tool>`, within the API's rule ^[a-zA-Z0-9_-]{1,64}$.

A permission rule names a server by that part (`mcp__github`), so the part must belong to that
server alone: a server name already in the rule's alphabet, without runs of "_" nor an "_" at
either end, is used as it is; any other name (`github.`, `my server`, `a__b`) gets its cleaned
form followed by a short hash of the real name, so it can never borrow another server's rules.
A tool name has every other character replaced by "_"; when two tools of a server would share a
name once cleaned, the one already clean keeps it (exact_first orders them) and the other ends with
a short hash; so does a name longer than 64 characters. Hashes are of the names as configured and
listed, so names stay the same from run to run.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
PREFIX = "mcp__"
_BAD = re.compile(r"[^a-zA-Z0-9_-]")
_RUNS = re.compile(r"_{2,}")


def _digest(*parts: str) -> str:
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=4).hexdigest()


def clean_server(name: str) -> str:
    cleaned = _RUNS.sub("_", _BAD.sub("_", name)).strip("_")
    if cleaned == name:
        return name
    return f"{cleaned or 'server'}_{_digest(name)}"


def clean_tool(name: str) -> str:
    return _BAD.sub("_", name) or "tool"


def _hashed(base: str, server: str, tool: str) -> str:
    digest = _digest(server, tool)
    return base[: MAX_NAME - len(digest) - 1] + "_" + digest


def exact_first(tool: str, server: str = "") -> tuple[bool, str]:
    """Sort key for a server's tools before naming them: those whose names need no cleaning
    nor hashing (too long) first, so they keep their exact names."""
    too_long = len(f"{PREFIX}{clean_server(server)}__{tool}") > MAX_NAME if server else False
    return (clean_tool(tool) != tool or too_long, tool)


def tool_name(server: str, tool: str, taken: set[str] | None = None) -> str:
    """The model-facing name of `tool` of `server` (their names as configured and listed), not one
    of `taken`."""
    base = f"{PREFIX}{clean_server(server)}__{clean_tool(tool)}"
    exact = base == f"{PREFIX}{server}__{tool}"
    name = base
    if len(name) > MAX_NAME or (taken is not None and name in taken and not exact):
        name = _hashed(base, server, tool)
    # A hashed name can be another tool's exact one (a server may list `<47 chars>_<hash>`):
    # never hand out a hashed name already taken (exact_first names the exact ones first).
    again = 0
    while taken is not None and name in taken and name != base:
        again += 1
        name = _hashed(base, server, f"{tool}\0{again}")
    return name


def server_prefix(server: str) -> str:
    """What every tool name of `server` starts with (`mcp__<server>__`)."""
    return f"{PREFIX}{clean_server(server)}__"
