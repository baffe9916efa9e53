"""`agentls trust DIR`: it confirms the workspace's .mcp.json and .agentls/config.json (either may
be alone), and shows what it confirms: the whole file when new, the diff when it changed since."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import agentls, workspace  # noqa: F401 - fixtures


def test_a_workspace_with_only_mcp_json_is_trusted_and_a_change_shows_its_diff(
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    servers = workspace / ".mcp.json"
    servers.write_text(json.dumps({"mcpServers": {"a": {"command": "srv-a"}}}) + "\n")
    first = agentls("trust", str(workspace), env=env)
    assert first.returncode == 0, first.stderr
    assert f"Trusted: {workspace}/.mcp.json" in first.stdout
    assert "  MCP server a: srv-a" in first.stdout
    assert '+{"mcpServers": {"a": {"command": "srv-a"}}}' in first.stdout  # the whole new file
    listed = agentls("mcp", "list", "--cwd", str(workspace), env=env)
    assert "agentls: ignored" not in listed.stderr and "(stdio: srv-a)" in listed.stdout

    servers.write_text(json.dumps({"mcpServers": {"b": {"command": "srv-b"}}}) + "\n")
    listed = agentls("mcp", "list", "--cwd", str(workspace), env=env)
    assert "it changed since you confirmed it" in listed.stderr
    again = agentls("trust", str(workspace), env=env)
    assert again.returncode == 0, again.stderr
    assert '-{"mcpServers": {"a": {"command": "srv-a"}}}' in again.stdout
    assert '+{"mcpServers": {"b": {"command": "srv-b"}}}' in again.stdout
    listed = agentls("trust", "--list", env=env)
    assert f"{workspace}/.mcp.json" in listed.stdout and "changed" not in listed.stdout
