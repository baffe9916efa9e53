"""A run cancelled (SIGINT) during a slow MCP tool, then its session resumed by a new process: the
resumed turn's first request offers every MCP tool, and neither process prints a traceback."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.mcp.conftest import stdio_entry
from tests.mcp.test_loop import tool_names


def _spawn(*args: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentls.cli.main", "run", "--json", "--cwd", str(cwd), *args],
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait_for_event(proc: subprocess.Popen[str], kind: str) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, f"no {kind} event within a minute"
        line = proc.stdout.readline()
        assert line, f"the run ended before a {kind} event: {proc.stderr and proc.stderr.read()}"
        event = json.loads(line)
        if event.get("type") == kind:
            return event


def test_a_session_resumed_after_a_cancel_offers_its_mcp_tools_at_once(
    tmp_path: Path, api: MessagesAPIServer, env: dict[str, str]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = Path(env["XDG_CONFIG_HOME"]) / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    servers = {"test": stdio_entry(), "other": stdio_entry()}
    config.write_text(
        json.dumps({"mcpServers": servers, "permissions": {"mcp__test": "allow"}}),
        encoding="utf-8",
    )
    api.enqueue(reply(tool_use("mcp__test__slow", {"seconds": 120})))
    first = _spawn("call the slow tool", env=env, cwd=workspace)
    try:
        _wait_for_event(first, "tool-call")
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert "Traceback" not in err, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["finishReason"] == "cancelled"

    before = len(api.requests)
    api.enqueue(reply(text("continued")))
    second = _spawn("--session", result["sessionId"], "continue", env=env, cwd=workspace)
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    assert "Traceback" not in err, err
    names = tool_names(api.bodies[before])
    assert "mcp__test__slow" in names and "mcp__other__echo" in names, names


def test_a_run_cancelled_while_its_mcp_servers_start_ends_without_a_traceback(
    tmp_path: Path, api: MessagesAPIServer, env: dict[str, str]
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = Path(env["XDG_CONFIG_HOME"]) / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    # Servers that never answer initialize: the turn waits for their start when it is cancelled.
    mute = {"command": "sleep", "args": ["120"], "timeout": 60_000}
    servers = {f"mute{i}": mute for i in range(4)}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    run = _spawn("hello", env=env, cwd=workspace)
    try:
        _wait_for_event(run, "turn-start")
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert json.loads(out.strip().splitlines()[-1])["finishReason"] == "cancelled"
    assert "Traceback" not in err and "never retrieved" not in err, err
    assert not api.requests  # nothing was sent
