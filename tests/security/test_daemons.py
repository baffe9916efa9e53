"""Processes end with their call: whatever a bash command starts (setsid, a double fork,
`nohup ... & disown`, `setsid -f`, a daemon that closes its output) is stopped when the call ends,
with the sandbox and without it, in-process and through `agentls run` (a child subreaper), and
the result says what was stopped only when something was."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentls.tools.support.sandbox import SandboxMode
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.security.conftest import SecurityFigures
from tests.security.sandbox_support import (
    bwrap_problem,
    context,
    kill_all,
    processes_with,
    require_bwrap,
    run,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

SURVIVES = "daemon survives"

PY_DAEMON = (
    "python3 -c 'import os, time\n"
    "if os.fork(): os._exit(0)\n"
    "os.setsid()\n"
    "if os.fork(): os._exit(0)\n"
    "os.closerange(0, 3)\n"
    "time.sleep({t})'"
)

# {t}: a sleep length unique to the case; the check looks for it in every command line.
DAEMONS = [
    "setsid sleep {t} &",
    "( (sleep {t} &) & )",
    "nohup sleep {t} & disown",
    "nohup sleep {t} > /dev/null 2>&1 & disown",
    "setsid -f sleep {t}",
    "setsid bash -c 'exec 0<&- 1>&- 2>&-; exec sleep {t}' &",
    PY_DAEMON,
    "env -i setsid -f sleep {t}",
    "setsid bash -c 'trap \"\" TERM HUP INT; sleep {t} & wait' > /dev/null 2>&1 &",
    "(trap '' TERM; setsid sleep {t} &) ; sleep 0.2",
    "sleep {t} & sleep {t} & sleep {t} &",
    "bash -c 'sleep {t} &' & wait",
    "for i in 1 2 3; do setsid -f sleep {t}; done",
    "echo 'sleep {t}' | at now 2>/dev/null; setsid -f sleep {t}",
]

_counter = iter(range(1000))


def marker() -> str:
    return f"300.{os.getpid() % 1000:03d}{next(_counter):03d}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path.resolve()


@pytest.mark.parametrize("mode", ["off", "required"])
@pytest.mark.parametrize("daemon", DAEMONS)
async def test_nothing_outlives_its_call(
    daemon: str, mode: SandboxMode, root: Path, security_figures: SecurityFigures
) -> None:
    if mode == "required":
        require_bwrap()
    t = marker()
    with security_figures.attempt(SURVIVES):
        try:
            result = await run(context(root, mode=mode), daemon.format(t=t) + "\necho started")
            assert "started" in result.output
            left = processes_with(t)
            assert not left, f"still running: {left}\n{result.output}"
            assert "stopped when the command ended" in result.output
            assert result.metadata["stopped_processes"] >= 1
        finally:
            kill_all(processes_with(t))


@pytest.mark.parametrize("mode", ["off", "required"])
async def test_no_note_when_nothing_was_left(mode: SandboxMode, root: Path) -> None:
    if mode == "required":
        require_bwrap()
    result = await run(context(root, mode=mode), "(sleep 0.1 &) ; sleep 0.3; echo done")
    assert "background" not in result.output and result.metadata["stopped_processes"] == 0


@pytest.mark.parametrize("mode", ["off", "required"])
async def test_a_timeout_stops_the_daemons_too(
    mode: SandboxMode, root: Path, security_figures: SecurityFigures
) -> None:
    if mode == "required":
        require_bwrap()
    t = marker()
    with security_figures.attempt(SURVIVES):
        try:
            result = await run(
                context(root, mode=mode), f"setsid -f sleep {t}; sleep 30", timeout_ms=500
            )
            assert result.metadata["timed_out"] is True
            assert not processes_with(t)
        finally:
            kill_all(processes_with(t))


# Through `agentls run --yes` (hardened: a child subreaper), including commands that kill the
# call's supervisor first, which leaves the server's own sweep to find what they started.
CLI_DAEMONS = [
    "setsid -f sleep {t}",
    PY_DAEMON,
    "setsid -f sleep {t}; kill -9 $PPID",
    "kill -9 $PPID; setsid -f sleep {t}; sleep 0.2",
    "kill -9 $PPID; env -i setsid -f sleep {t}; sleep 0.2",
    "kill -9 $PPID; env -i setsid -f bash -c 'sleep 0.5; env -i setsid -f sleep {t}'; sleep 0.2",
]


@pytest.mark.parametrize("sandbox", ["off", "required"])
def test_nothing_outlives_its_call_under_agentls_run(
    sandbox: str, tmp_path: Path, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    if sandbox == "required" and bwrap_problem() is not None:
        require_bwrap()
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".agentls").mkdir()
    markers = [marker() for _ in CLI_DAEMONS]
    for daemon, t in zip(CLI_DAEMONS, markers, strict=True):
        api.enqueue(reply(tool_use("bash", {"command": daemon.format(t=t) + "\necho started"})))
    api.enqueue(reply(text("done")))
    config = tmp_path / "config"
    (config / "agentls").mkdir(parents=True)
    (config / "agentls" / "config.json").write_text(f'{{"sandbox": "{sandbox}"}}')
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "test-key",
        "AGENTLS_DATA_DIR": str(tmp_path / "data"),
        "AGENTLS_MODEL": "claude-sonnet-5-5",
        "XDG_CONFIG_HOME": str(config),
    }
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "agentls.cli.main", "run", "--cwd", str(root), "--yes", "go"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        time.sleep(1.0)  # the last case's inner daemon starts 0.5 s after the call
        results = [
            block
            for request in api.requests
            for message in request.body["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        outputs = {str(r["tool_use_id"]): str(r["content"]) for r in results}
        assert len(outputs) == len(CLI_DAEMONS)
        for t in markers:
            with security_figures.attempt(SURVIVES):
                assert not processes_with(t), f"{t} survived; results: {outputs}"
    finally:
        for t in markers:
            kill_all(processes_with(t))
