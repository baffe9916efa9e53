"""Where MCP servers come from: the user's config, the editor's settings, and a workspace's
.mcp.json or .agentls/config.json only when the workspace is trusted (each server is a program
agentls would run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentls.config import load_settings
from agentls.trust import TrustStore, mcp_json, workspace_config
from tests.mcp.conftest import pids, stdio_entry


def write_json(path: Path, data: object) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data).encode()
    path.write_bytes(raw)
    return raw


def test_an_untrusted_workspace_mcp_json_is_ignored_and_said(tmp_path: Path) -> None:
    write_json(tmp_path / ".mcp.json", {"mcpServers": {"evil": {"command": "rm"}}})
    settings = load_settings(tmp_path)
    assert settings.mcp_servers is None
    assert settings.untrusted_notice is not None
    assert ".mcp.json" in settings.untrusted_notice and "agentls trust" in settings.untrusted_notice


def test_an_untrusted_agentls_config_cannot_add_servers(tmp_path: Path) -> None:
    write_json(tmp_path / ".agentls" / "config.json", {"mcpServers": {"evil": {"command": "rm"}}})
    settings = load_settings(tmp_path)
    assert settings.mcp_servers is None
    assert settings.untrusted_notice and "mcpServers" in settings.untrusted_notice


def test_only_confirmed_content_runs_and_a_change_keeps_the_confirmed_servers(
    tmp_path: Path,
) -> None:
    raw = write_json(tmp_path / ".mcp.json", {"mcpServers": {"p": {"command": "srv"}}})
    # The editor's trust alone confirms no content: its servers wait for the user's answer.
    editor = load_settings(tmp_path, workspace_trusted=True)
    assert editor.mcp_servers is None
    [pending] = editor.pending_configs
    assert pending.kind == "mcp" and pending.change == "new"
    TrustStore().trust(mcp_json(tmp_path), raw)
    assert load_settings(tmp_path).mcp_servers == {"p": {"command": "srv"}}
    write_json(tmp_path / ".mcp.json", {"mcpServers": {"p": {"command": "other"}}})
    changed = load_settings(tmp_path, workspace_trusted=True)
    assert changed.mcp_servers == {"p": {"command": "srv"}}, "not the confirmed servers"
    assert [p.change for p in changed.pending_configs] == ["changed"]


def test_layers_add_servers(tmp_path: Path, _isolated_config_home: Path) -> None:
    write_json(_isolated_config_home / "config.json", {"mcpServers": {"user": {"command": "u"}}})
    write_json(tmp_path / ".mcp.json", {"mcpServers": {"project": {"command": "p"}}})
    write_json(
        tmp_path / ".agentls" / "config.json",
        {"mcpServers": {"project": {"command": "p2"}, "local": {"command": "l"}}},
    )
    for file in (mcp_json(tmp_path), workspace_config(tmp_path)):
        TrustStore().trust(file, file.read_bytes())
    overrides = {"mcpServers": {"editor": {"command": "e"}}}
    settings = load_settings(tmp_path, overrides)
    assert settings.mcp_servers == {
        "user": {"command": "u"},
        "project": {"command": "p2"},  # .agentls/config.json comes after .mcp.json
        "local": {"command": "l"},
        "editor": {"command": "e"},
    }


def test_agentls_mcp_list_runs_a_workspace_server_only_once_trusted(
    tmp_path: Path, env: dict[str, str]
) -> None:
    ws = tmp_path / "ws"
    pidfile = tmp_path / "pids"
    write_json(
        ws / ".mcp.json", {"mcpServers": {"test": stdio_entry(MCP_TEST_PIDFILE=str(pidfile))}}
    )
    agentls = [sys.executable, "-m", "agentls.cli.main"]

    def mcp_list() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*agentls, "mcp", "list", "--cwd", str(ws)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    untrusted = mcp_list()
    assert untrusted.returncode == 0, untrusted.stderr
    assert "No MCP servers configured" in untrusted.stdout
    assert ".mcp.json" in untrusted.stderr  # said, with how to trust it
    assert not pidfile.exists()  # never started
    trust = subprocess.run(
        [*agentls, "trust", str(ws)], env=env, capture_output=True, text=True, timeout=60
    )
    assert trust.returncode == 0, trust.stderr
    assert "MCP server test" in trust.stdout
    trusted = mcp_list()
    assert trusted.returncode == 0, trusted.stderr + trusted.stdout
    assert "test  running" in trusted.stdout
    assert "mcp__test__echo  [says read-only]" in trusted.stdout
    assert len(pids(pidfile)) == 1
    listed = subprocess.run(
        [*agentls, "mcp", "list", "--json", "--cwd", str(ws)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    (server,) = json.loads(listed.stdout)
    assert server["name"] == "test" and server["status"] == "running"
    assert {"name": "mcp__test__add", "remoteName": "add", "readOnlyHint": False} in server["tools"]
