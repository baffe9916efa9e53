"""Neovim end to end: its built-in LSP client runs `agentls serve` and the agent fixes a test.

Headless Neovim (tests/e2e/nvim_agent.lua) opens calc.py of the demo project, starts the server
for that buffer with the scripted model and every tool allowed (Neovim declares no approvals),
sends agent/newSession and agent/prompt, and reports its buffer's lines. The fix must be in
Neovim's buffer, which proves it came as a workspace/applyEdit that Neovim applied, and on disk,
where the server wrote it through (Neovim does not declare `savesEdits`), so the tests pass.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

NVIM = shutil.which("nvim")
SCRIPT = Path(__file__).with_name("nvim_agent.lua")
FIX = "    return (ordered[middle - 1] + ordered[middle]) / 2"
BUG = "    return (ordered[middle] + ordered[middle + 1]) / 2"
WAIT_MS = 60_000  # each wait inside Neovim
RUN_TIMEOUT_S = 100  # the whole Neovim run

pytestmark = pytest.mark.skipif(
    NVIM is None,
    reason="nvim is not installed: the Neovim end-to-end test needs Neovim 0.7+ on PATH "
    "(scripts/ensure-system-deps.sh installs it with apt-get when run as root)",
)


def _tail(text: str, lines: int = 60, width: int = 1000) -> str:
    kept = text.splitlines()[-lines:]
    return "\n".join(line if len(line) <= width else line[:width] + " ..." for line in kept)


class NeovimRun:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.workspace = tmp / "project"
        self.result_file = tmp / "result.json"
        self.stdout = ""
        self.stderr = ""
        self.returncode: int | None = None
        self.timed_out = False
        self.result: dict[str, Any] = {}

    def copy_demo_project(self) -> None:
        self.workspace.mkdir()
        sample = resources.files("agentls.demo") / "sample"
        for name in ("calc.py", "test_calc.py"):
            (self.workspace / name).write_text(
                (sample / name).read_text(encoding="utf-8"), encoding="utf-8"
            )

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "NVIM", "VIM", "MYVIMRC", "XDG_"))
        }
        env.pop("AGENTLS_MODEL", None)
        for name in ("CONFIG", "DATA", "STATE", "CACHE", "RUNTIME"):
            folder = self.tmp / "xdg" / name.lower()
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            env[f"XDG_{name}_HOME" if name != "RUNTIME" else "XDG_RUNTIME_DIR"] = str(folder)
        env.update(
            AGENTLS_DATA_DIR=str(self.tmp / "agentls-data"),
            AGENTLS_E2E_RESULT=str(self.result_file),
            AGENTLS_E2E_WORKSPACE=str(self.workspace),
            AGENTLS_E2E_SERVER_CMD=json.dumps([sys.executable, "-m", "agentls.cli.main", "serve"]),
            AGENTLS_E2E_TIMEOUT_MS=str(WAIT_MS),
        )
        return env

    def run(self) -> None:
        assert NVIM is not None
        proc = subprocess.Popen(
            [NVIM, "--headless", "--clean", "-u", str(SCRIPT)],
            cwd=self.workspace,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: the server goes down with it
        )
        try:
            self.stdout, self.stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            self.stdout, self.stderr = proc.communicate(timeout=10)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # a server left behind, if any
            except ProcessLookupError:
                pass
        self.returncode = proc.returncode
        if self.result_file.exists():
            self.result = json.loads(self.result_file.read_text(encoding="utf-8"))

    def report(self) -> str:
        """Everything needed to see why a run failed."""
        parts = [
            f"nvim exit code {self.returncode}"
            + (f" (killed after {RUN_TIMEOUT_S} s)" if self.timed_out else ""),
            f"stage: {self.result.get('stage', '(no result file)')}",
            f"error: {self.result.get('error')}",
            f"nvim stdout:\n{_tail(self.stdout)}",
            f"nvim stderr:\n{_tail(self.stderr)}",
            f":messages:\n{self.result.get('messages')}",
            "events: " + ", ".join(str(e.get("type")) for e in self.result.get("events", [])),
        ]
        log = self.result.get("lsp_log")
        if log and Path(log).exists():
            text = Path(log).read_text(errors="replace")
            # What the server wrote to stderr first (tracebacks), then the end of the log.
            stderr = [line for line in text.splitlines() if '"stderr"' in line]
            parts.append(f"server stderr (from the LSP log):\n{_tail(chr(10).join(stderr), 40)}")
            parts.append(f"LSP log ({log}), last lines:\n{_tail(text, 30)}")
        return "\n\n".join(parts)


def test_neovim_applies_the_agents_fix_to_its_buffer(tmp_path: Path) -> None:
    nvim = NeovimRun(tmp_path)
    nvim.copy_demo_project()
    nvim.run()
    result = nvim.result
    assert result.get("ok") is True and nvim.returncode == 0, nvim.report()

    assert result["buffer_lines_before"].count(BUG) == 1, nvim.report()
    assert result["prompt_result"]["finishReason"] == "end_turn", nvim.report()

    # The fix is in Neovim's buffer: it arrived as a workspace/applyEdit that Neovim applied.
    lines = result["buffer_lines"]
    assert FIX in lines and BUG not in lines, nvim.report()
    assert len(result["apply_edits"]) == 1, nvim.report()
    assert Path(result["buffer_name"]).resolve() == (nvim.workspace / "calc.py").resolve()

    # Streamed over agent/event: the tools ran without asking (everything allowed).
    events = result["events"]
    types = [e["type"] for e in events]
    assert types[0] == "turn-start" and types[-1] == "turn-end", types
    assert "permission-request" not in types, types
    tools = [e["tool"] for e in events if e["type"] == "tool-call"]
    assert tools == ["bash", "read", "edit", "bash"], tools
    results = [e for e in events if e["type"] == "tool-result"]
    assert not any(e["isError"] for e in results), results
    assert "FAILED (failures=1)" in results[0]["output"]
    assert "OK" in results[-1]["output"], results[-1]["output"]

    # On disk too (written through by the server), so the tests pass there.
    on_disk = (nvim.workspace / "calc.py").read_text(encoding="utf-8")
    assert on_disk.splitlines() == lines
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-v"],
        cwd=nvim.workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
