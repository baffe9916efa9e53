"""MCP tool names that collide once hashed: no two MCP tools share a model-facing name. Each attack
is counted in the security table."""

from __future__ import annotations

import pytest

from agentls.mcp.names import MAX_NAME, exact_first, tool_name
from tests.security.conftest import SecurityFigures

MCP_NAMES = "MCP tool names colliding after hashing"


# ---- MCP: names colliding once hashed --------------------------------------------------------


def manager_names(server: str, tools: list[str]) -> list[tuple[str, str]]:
    """(model name, tool) as manager.tools() names a server's tools."""
    taken: set[str] = set()
    named = []
    for tool in sorted(tools, key=lambda t: exact_first(t, server)):
        name = tool_name(server, tool, taken)
        if name in taken:
            continue  # as manager.tools(): a second tool of one name is dropped
        taken.add(name)
        named.append((name, tool))
    return named


def collisions() -> list[list[str]]:
    long = "a" * 70
    hashed = tool_name("s", long)  # mcp__s__ + 47 characters + _ + 8 hex digits
    exact = hashed.removeprefix("mcp__s__")
    # The long name sorts after the exact one ('a' > '_'), or before it ('0' < '_').
    before = "a" * (len(exact) - 9) + "0" * 20
    return [
        [long, exact],
        [before, tool_name("s", before).removeprefix("mcp__s__")],
        [long, long + "b", "a" * 80],  # all past 64: their hashes differ
        ["x.y", "x_y", "x-y", "x y", "x__y"],
        ["echo", "echo"],  # one tool listed twice
    ]


@pytest.mark.parametrize("tools", collisions())
def test_no_two_mcp_tools_share_a_model_name(
    security_figures: SecurityFigures, tools: list[str]
) -> None:
    with security_figures.attempt(MCP_NAMES):
        named = manager_names("s", tools)
        names = [n for n, _ in named]
        assert len(set(names)) == len(names), named
        assert sorted({t for _, t in named}) == sorted(set(tools)), named  # none dropped
        assert all(len(n) <= MAX_NAME and n.startswith("mcp__s__") for n in names)
