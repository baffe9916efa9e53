"""The servers, and whatever they started, end with agentls even when it is killed (SIGKILL):
each stdio server runs under bash's supervisor, which its parent's death stops."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.mcp.conftest import alive, pids, stdio_entry


def test_a_killed_agent_leaves_no_server_behind(
    tmp_path: Path, env: dict[str, str], api: MessagesAPIServer
) -> None:
    pidfile = tmp_path / "pids"
    config = tmp_path / "config" / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    servers = {"test": stdio_entry(MCP_TEST_PIDFILE=str(pidfile))}
    config.write_text(json.dumps({"mcpServers": servers, "permissions": {"mcp__test": "allow"}}))
    ws = tmp_path / "ws"
    ws.mkdir()
    hold = threading.Event()
    api.enqueue(reply(tool_use("mcp__test__spawn")), reply(text("never"), hold=hold))
    agent = subprocess.Popen(
        [sys.executable, "-m", "agentls.cli.main", "run", "--cwd", str(ws), "spawn"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while len(pids(pidfile)) < 2 or len(api.requests) < 2:
            assert agent.poll() is None, "agentls ended early"
            assert time.monotonic() < deadline, "the server did not start its child"
            time.sleep(0.05)
        started = pids(pidfile)
        assert all(alive(p) for p in started)  # the server and the sleep it started
        os.kill(agent.pid, signal.SIGKILL)
        agent.wait(10)
        deadline = time.monotonic() + 20
        while any(alive(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in started if alive(p)]
    finally:
        hold.set()
        if agent.poll() is None:
            agent.kill()
            agent.wait(10)
        for pid in pids(pidfile):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
