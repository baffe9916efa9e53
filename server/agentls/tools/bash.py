"""bash: run a shell command in the workspace root, in its own process group."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from pydantic import Field

from agentls.tools._common import expect_input, human_size, input_dict, kill_process_group, plural
from agentls.tools.base import PermissionQuery, Tool, ToolContext, ToolError, ToolInput, ToolResult

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
HEAD_BYTES = 30_000
TAIL_BYTES = 30_000
# Seconds between SIGTERM and SIGKILL.
TIMEOUT_GRACE = 2.0
CANCEL_GRACE = 0.5
# After bash exits, how long background processes may keep the output pipe open.
LINGER_GRACE = 1.0
_READ_CHUNK = 64 * 1024
_PROGRESS_EVERY = 0.5


class BashInput(ToolInput):
    command: str = Field(description="The command line, run with `bash -c` in the workspace root.")
    timeout_ms: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Kill the command after this many milliseconds (default {DEFAULT_TIMEOUT_MS}, "
        f"max {MAX_TIMEOUT_MS}).",
    )


class OutputCapture:
    """Keeps the first and last bytes of an output stream of any size, and counts the rest."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head_cap = head
        self.tail_cap = tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.newlines = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self.newlines += data.count(b"\n")
        if len(self.head) < self.head_cap:
            take = self.head_cap - len(self.head)
            self.head += data[:take]
            data = data[take:]
        if data:
            if len(data) >= self.tail_cap:
                self.tail = bytearray(data[-self.tail_cap :])
            else:
                self.tail += data
                excess = len(self.tail) - self.tail_cap
                if excess > 0:
                    del self.tail[:excess]

    @property
    def omitted(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def render(self) -> str:
        if self.omitted <= 0:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        head = bytes(self.head)
        tail = bytes(self.tail)
        # Cut at line boundaries when one is near, so no half lines are shown.
        cut = head.rfind(b"\n", max(0, len(head) - 2000))
        if cut >= 0:
            head = head[: cut + 1]
        cut = tail.find(b"\n", 0, 2000)
        if 0 <= cut < len(tail) - 1:
            tail = tail[cut + 1 :]
        omitted = self.total - len(head) - len(tail)
        omitted_lines = self.newlines - head.count(b"\n") - tail.count(b"\n")
        marker = (
            f"\n[... {human_size(omitted)} ({omitted} bytes, {plural(omitted_lines, 'line')}) of "
            "output omitted here; only the start and the end are shown ...]\n"
        )
        return head.decode("utf-8", "replace") + marker + tail.decode("utf-8", "replace")


def child_env() -> dict[str, str]:
    """The server's environment minus its API credentials and settings (ANTHROPIC_*)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}


def _exit_text(code: int | None) -> str:
    if code is None:
        return "Exit code: unknown (the process was killed)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"Exit code: {code} (terminated by {name})"
    return f"Exit code: {code}"


class BashTool(Tool):
    name = "bash"
    description = (
        "Run a shell command with `bash -c` in the workspace root and return its combined "
        "stdout and stderr, and the exit code. Use it for builds, tests, git, package managers and "
        "other programs. Each call is a fresh non-interactive shell: stdin is closed, and `cd` or "
        "variables do not carry over to the next call, so chain steps with && and use paths "
        "relative to the root. Times out after timeout_ms (default "
        f"{DEFAULT_TIMEOUT_MS} ms, max {MAX_TIMEOUT_MS}); on timeout the command and every "
        f"process it started are killed. Output over ~{(HEAD_BYTES + TAIL_BYTES) // 1000} KB is cut in "
        "the middle (start and end kept), so filter noisy output (e.g. `| tail -50`). Prefer read, "
        "grep, glob, list and edit over cat, grep, find, ls and sed. Background processes that "
        "still hold the output when the command ends are stopped; redirect their output to a file "
        "(`cmd > /tmp/log 2>&1 &`) to keep them running."
    )
    input_model = BashInput

    def title(self, raw: dict[str, Any]) -> str:
        command = raw.get("command")
        if isinstance(command, str):
            first = command.strip().splitlines()[0] if command.strip() else ""
            return first if len(first) <= 80 else first[:77] + "..."
        return self.name

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, BashInput)
        command = params.command
        if not command.strip():
            raise ToolError("command is empty.")
        timeout_ms = params.timeout_ms or DEFAULT_TIMEOUT_MS
        await ctx.authorize(
            PermissionQuery(
                tool=self.name, subject=command, title=command, input=input_dict(params)
            )
        )
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=str(ctx.workspace.root),
            env=child_env(),
            start_new_session=True,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        pgid = proc.pid  # start_new_session: bash leads its own session and process group
        capture = OutputCapture()
        assert proc.stdout is not None
        pump = asyncio.ensure_future(self._pump(proc.stdout, capture, ctx))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        timed_out = False
        lingering = False
        try:
            while proc.returncode is None:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    timed_out = True
                    break
                if pump.done():  # bash closed its output but still runs
                    await asyncio.sleep(min(0.02, remaining))
                else:
                    await asyncio.wait({pump}, timeout=min(0.1, remaining))
            if timed_out:
                ctx.progress(f"timed out after {timeout_ms} ms; stopping the command")
                await kill_process_group(pgid, TIMEOUT_GRACE)
            else:
                done, _ = await asyncio.wait({pump}, timeout=LINGER_GRACE)
                if not done:
                    lingering = True
                    await kill_process_group(pgid, TIMEOUT_GRACE)
            await asyncio.wait({pump}, timeout=2.0)
            if not pump.done():  # something outside the group holds the pipe
                pump.cancel()
            if proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._exited(proc), 2.0)
        except BaseException:
            pump.cancel()
            await kill_process_group(pgid, CANCEL_GRACE)
            raise

        body = capture.render().rstrip("\n") or "(no output)"
        parts = [body, ""]
        if capture.omitted > 0:
            parts.append(
                f"(The output was {human_size(capture.total)} ({plural(capture.newlines, 'line')}); "
                "only its start and end are shown. Redirect it to a file and use grep or read, or "
                "filter it with head/tail/grep, to see specific parts.)"
            )
        if lingering:
            parts.append(
                "(Background processes were still holding the output after the command ended; "
                "they were stopped. To leave something running, redirect its output, e.g. "
                "`cmd > /tmp/cmd.log 2>&1 &`.)"
            )
        if timed_out:
            parts.append(
                f"Command timed out after {timeout_ms} ms; it was killed, with every process it "
                "started. Output up to that point is shown above."
            )
        else:
            parts.append(_exit_text(proc.returncode))
        return ToolResult(
            "\n".join(parts),
            is_error=timed_out,
            title=self.title({"command": command}),
            metadata={
                "exit_code": proc.returncode,
                "timed_out": timed_out,
                "output_bytes": capture.total,
                "truncated": capture.omitted > 0,
            },
        )

    @staticmethod
    async def _exited(proc: asyncio.subprocess.Process) -> None:
        # Not proc.wait(): it also waits for the output pipe to close, which a background
        # process outside our reach may hold open. returncode is set as soon as bash exits.
        while proc.returncode is None:  # noqa: ASYNC110
            await asyncio.sleep(0.02)

    @staticmethod
    async def _pump(stream: asyncio.StreamReader, capture: OutputCapture, ctx: ToolContext) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while chunk := await stream.read(_READ_CHUNK):
            capture.feed(chunk)
            now = loop.time()
            if now - last >= _PROGRESS_EVERY:
                last = now
                lines = [ln for ln in chunk.decode("utf-8", "replace").splitlines() if ln.strip()]
                if lines:
                    ctx.progress(lines[-1][:200])
