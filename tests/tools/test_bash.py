from __future__ import annotations

import asyncio
import os
import signal
import tracemalloc
from pathlib import Path

import pytest

from agentls.tools import bash as bash_module
from agentls.tools.base import PermissionDenied, ToolError
from agentls.tools.bash import BashTool, OutputCapture
from tests.tools.conftest import RunTool, ToolTestContext
from tests.waiting import until

bash = BashTool()


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in ("Z", "X")


def reap_later(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def test_output_and_exit_code(root: Path, run: RunTool, ctx: ToolTestContext) -> None:
    result = await run(bash, command="echo hello; echo oops >&2; pwd")
    assert not result.is_error
    assert result.output == f"hello\noops\n{root}\n\nExit code: 0"
    q = ctx.queries[-1]
    assert (q.tool, q.subject, q.title) == (
        "bash",
        "echo hello; echo oops >&2; pwd",
        "echo hello; echo oops >&2; pwd",
    )
    assert result.metadata["exit_code"] == 0


async def test_nonzero_exit_is_not_a_tool_error(run: RunTool) -> None:
    result = await run(bash, command="echo failing; exit 3")
    assert not result.is_error
    assert result.output.endswith("Exit code: 3")
    assert result.metadata["exit_code"] == 3


async def test_no_output(run: RunTool) -> None:
    result = await run(bash, command="true")
    assert result.output == "(no output)\n\nExit code: 0"


async def test_killed_by_signal(run: RunTool) -> None:
    result = await run(bash, command="kill -KILL $$")
    assert "SIGKILL" in result.output


async def test_stdin_is_closed(run: RunTool) -> None:
    # An open stdin would block `read` until the timeout killed it: no "read returned" then.
    result = await run(bash, command='read x; echo "read returned $?"', timeout_ms=10_000)
    assert "read returned 1" in result.output


async def test_anthropic_env_removed(run: RunTool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://x")
    monkeypatch.setenv("AGENTLS_TEST_VISIBLE", "yes")
    result = await run(bash, command="env")
    assert "ANTHROPIC_" not in result.output and "sk-secret" not in result.output
    assert "AGENTLS_TEST_VISIBLE=yes" in result.output


async def test_undecodable_bytes_replaced(run: RunTool) -> None:
    result = await run(bash, command=r"printf 'ok \xff\xfe end\n'")
    assert "ok \ufffd\ufffd end" in result.output


async def test_timeout_kills_children(run: RunTool, monkeypatch: pytest.MonkeyPatch) -> None:
    command = "sleep 100 & echo child=$!; (sleep 100; echo never) & echo child=$!; echo started; sleep 100"
    result = await run(bash, command=command, timeout_ms=700)
    pids = [
        int(line.split("=")[1]) for line in result.output.splitlines() if line.startswith("child=")
    ]
    try:
        assert len(pids) == 2
        assert result.is_error and "timed out after 700 ms" in result.output
        # A wait for the children's end of the output would have read "never".
        assert "started" in result.output and "never" not in result.output
        assert not any(alive(pid) for pid in pids)
    finally:
        reap_later(pids)


async def test_timeout_escalates_to_sigkill(run: RunTool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bash_module, "TIMEOUT_GRACE", 0.3)
    command = "trap '' TERM; sleep 100 & echo child=$!; sleep 100"
    result = await run(bash, command=command, timeout_ms=300)
    pids = [
        int(line.split("=")[1]) for line in result.output.splitlines() if line.startswith("child=")
    ]
    try:
        assert "timed out" in result.output
        assert pids and not alive(pids[0])
    finally:
        reap_later(pids)


async def test_cancel_kills_process_group_promptly(root: Path, ctx: ToolTestContext) -> None:
    pidfile = root / "pids"
    command = f"echo $$ > {pidfile}; sleep 100 & echo $! >> {pidfile}; sleep 100"
    task = asyncio.ensure_future(bash.run(bash.parse({"command": command}), ctx))
    await until(
        lambda: pidfile.exists() and len(pidfile.read_text().split()) == 2, "both pids written"
    )
    pids = [int(p) for p in pidfile.read_text().split()]
    assert all(alive(pid) for pid in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    try:
        # Gone by the time the cancelled call has ended.
        assert not any(alive(pid) for pid in pids)
    finally:
        reap_later(pids)


async def test_background_holding_output_is_stopped(run: RunTool) -> None:
    result = await run(bash, command="sleep 100 & echo child=$!", timeout_ms=20_000)
    pids = [
        int(line.split("=")[1]) for line in result.output.splitlines() if line.startswith("child=")
    ]
    try:
        # Not held until the timeout by the child's end of the output: the command's own exit.
        assert result.output.endswith("Exit code: 0")
        assert "left 1 background process running (" in result.output
        assert result.metadata["stopped_processes"] == 1
        assert not alive(pids[0])
    finally:
        reap_later(pids)


async def test_background_with_redirected_output_is_stopped_too(run: RunTool) -> None:
    # Nothing a command starts outlives its call, whatever it does with its output.
    result = await run(bash, command="sleep 100 > /dev/null 2>&1 & echo child=$!")
    pids = [
        int(line.split("=")[1]) for line in result.output.splitlines() if line.startswith("child=")
    ]
    try:
        assert "left 1 background process running (" in result.output
        assert not alive(pids[0])
    finally:
        reap_later(pids)


async def test_no_note_when_nothing_was_left_running(run: RunTool) -> None:
    result = await run(bash, command="sleep 0.01 & wait; echo done")
    assert "background" not in result.output and result.metadata["stopped_processes"] == 0


async def test_huge_output_is_capped(run: RunTool) -> None:
    tracemalloc.start()
    try:
        result = await run(
            bash, command="yes 'twenty bytes line.' | head -c 50000000; echo; echo THE-END"
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024, peak
    out = result.output
    assert len(out) < 70_000
    assert out.startswith("twenty bytes line.\n")
    assert "THE-END" in out and out.endswith("Exit code: 0")
    assert "output omitted here" in out and "only its start and end are shown" in out
    assert result.metadata["truncated"] and result.metadata["output_bytes"] > 50_000_000


def test_capture_counts() -> None:
    cap = OutputCapture(head=10, tail=10)
    for i in range(100):
        cap.feed(f"line {i:03}\n".encode())
    assert cap.total == 900
    text = cap.render()
    assert text.startswith("line 000\n") and text.endswith("line 099\n")
    assert "98 lines" in text and "882 bytes" in text


async def test_timeout_over_max_rejected(run: RunTool) -> None:
    with pytest.raises(ToolError, match="timeout_ms"):
        await run(bash, command="true", timeout_ms=600_001)


async def test_empty_command(run: RunTool) -> None:
    with pytest.raises(ToolError, match="empty"):
        await run(bash, command="   ")


async def test_permission_denied_does_not_run(
    root: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    ctx.deny_feedback = "use make instead"
    with pytest.raises(PermissionDenied, match="use make instead"):
        await run(bash, command="touch ran.txt")
    assert not (root / "ran.txt").exists()


async def test_progress_reported(run: RunTool, ctx: ToolTestContext) -> None:
    await run(bash, command="for i in 1 2 3 4; do echo step $i; sleep 0.25; done")
    assert any(m.startswith("step") for m in ctx.progress_messages)
