"""Shared by the sandbox, daemon and API-key tests: running BashTool with a sandbox policy, and
whether bubblewrap works here (skipped with the reason when not, failing under CI)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
import shutil
import signal
from pathlib import Path

import pytest

from agentls.tools.base import ToolResult
from agentls.tools.bash import BashTool
from agentls.tools.support.sandbox import SandboxMode, SandboxPolicy, probe
from tests.tools.conftest import ToolTestContext

bash = BashTool()


@functools.cache
def bwrap_problem() -> str | None:
    found = shutil.which("bwrap")
    if found is None:
        return "bubblewrap (bwrap) is not installed"
    # In a thread of its own: callers may be inside a running event loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(probe(found))).result()


def require_bwrap() -> None:
    """Skip (fail under CI) when the sandbox cannot run here."""
    problem = bwrap_problem()
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"the sandbox tests must run under CI, but {problem}")
    pytest.skip(f"{problem}: `bash scripts/ensure-system-deps.sh bwrap` installs it")


def context(root: Path, mode: SandboxMode = "required", network: bool = False) -> ToolTestContext:
    ctx = ToolTestContext(root)
    ctx.sandbox = SandboxPolicy(mode=mode, network=network)
    return ctx


async def run(ctx: ToolTestContext, command: str, timeout_ms: int = 30_000) -> ToolResult:
    return await bash.run(bash.parse({"command": command, "timeout_ms": timeout_ms}), ctx)


def processes_with(marker: str) -> list[int]:
    """Live (not zombie) processes whose command line holds marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and stat[stat.rfind(")") + 2] not in ("Z", "X"):
            found.append(int(entry))
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def outside_dir(name: str) -> Path:
    """A fresh directory outside /tmp (the sandbox's /tmp is private, so a file under the host's
    /tmp would be out of reach for that reason alone)."""
    for base in (Path("/var/tmp"), Path.home() / ".cache"):
        try:
            base.mkdir(parents=True, exist_ok=True)
            path = base / f"agentls-test-{name}-{os.getpid()}-{os.urandom(4).hex()}"
            path.mkdir()
            return path
        except OSError:
            continue
    pytest.skip("no writable directory outside /tmp for the test")
