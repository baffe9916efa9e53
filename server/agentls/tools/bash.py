"""bash: run a shell command in the workspace root, in its own process group."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import secrets
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.environ_scrub import child_environment
from agentls.permission.bash_decision import changes_protected
from agentls.tools.base import (
    PermissionQuery,
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
    input_dict,
)
from agentls.tools.support import sandbox
from agentls.tools.support.outputs import SavedOutput
from agentls.tools.support.processes import kill_process_group
from agentls.tools.support.sandbox import SandboxPlan
from agentls.tools.support.supervise import start_time, sweep_call
from agentls.tools.support.text import human_size, plural
from agentls.workspace.folders import folders_of

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
# The output shown inline: its first and last bytes (about 30 KB in all). All of a longer one
# is saved to a file the read tool reads (tools/support/outputs.py).
HEAD_BYTES = 15_000
TAIL_BYTES = 15_000
# Seconds between SIGTERM and SIGKILL.
TIMEOUT_GRACE = 2.0
CANCEL_GRACE = 0.5
# Each call runs under this supervisor (a child subreaper: what the command starts ends with it).
SUPERVISOR = str(Path(__file__).parent / "support" / "supervise.py")
# Every process of a call carries CALL_MARKER=<random> in its environment (unless it drops it).
CALL_MARKER = "AGENTLS_CALL"
# The supervisors of the calls running now, in this process (never swept by another call).
_running: set[int] = set()
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


def saved_note(capture: OutputCapture, saved: SavedOutput, path: Path | None) -> str:
    """What the model is told of output too long to show: which lines were left out, and the
    file that holds it all (how to read parts of it), or why there is none."""
    size = f"{human_size(capture.total)} ({plural(capture.newlines + 1, 'line')})"
    if path is None:
        return (
            f"(The output was {size}; only its start and end are shown, and it could not be "
            "saved. Rerun the command with its output redirected to a file in the workspace, "
            "or filter it with head/tail/grep, to see specific parts.)"
        )
    first = bytes(capture.head).count(b"\n") + 1
    last = capture.newlines + 1 - bytes(capture.tail).count(b"\n")
    cut = (
        f" It holds the first {human_size(saved.written)} only: the rest was not kept."
        if saved.cut
        else ""
    )
    return (
        f"(The output was {size}; only its start and end are shown, about lines {first}-{last} "
        f"are left out. All of it is saved in {path}: read it with the read tool, e.g. "
        f"offset={first} limit=500 for the part left out.{cut})"
    )


@dataclass
class CallReport:
    """What the supervisor (tools/support/supervise.py) reported when the call ended."""

    stopped: list[str] = field(default_factory=list)
    left: int = 0
    complete: bool = False  # the supervisor reported (it was not killed first)

    @classmethod
    def parse(cls, raw: bytes) -> CallReport:
        try:
            data = json.loads(raw)
            stopped = [str(x) for x in data["stopped"]]
            count = int(data["count"])
            left = int(data["left"])
        except (ValueError, KeyError, TypeError):
            return cls()
        stopped += ["..."] * max(0, count - len(stopped))
        return cls(stopped=stopped, left=left, complete=True)


def _read_all(fd: int) -> bytes:
    """Everything written to the report pipe (its writers are gone by now: no wait)."""
    os.set_blocking(fd, False)
    chunks = []
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    return b"".join(chunks)


def child_env() -> dict[str, str]:
    """The server's environment minus its API credentials and settings (environ_scrub)."""
    return child_environment()


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


async def _sandbox_plan(ctx: ToolContext, command: str) -> SandboxPlan | None:
    """How the command will run: in the sandbox (its plan) or not (None).

    Decided before the question: it says whether the command will run sandboxed. A line that
    changes what the sandbox keeps read-only (`git commit`, a write to .git or .agentls) would
    fail inside it: unless the sandbox is required, it runs outside, and its question says so
    (such lines ask unless a rule of the user's names them)."""
    if ctx.sandbox.mode == "required" or not changes_protected(command, ctx.workspace.root):
        also = [f.root for f in folders_of(ctx.workspace).others]  # every folder writable
        return await sandbox.prepare(ctx.sandbox, ctx.workspace.root, keep=(SUPERVISOR,), also=also)
    return None


async def _start(
    ctx: ToolContext, command: str, plan: SandboxPlan | None, marker: str
) -> tuple[asyncio.subprocess.Process, int]:
    """The supervisor running `bash -c command` (in the sandbox when planned), and the read end
    of the pipe it reports on."""
    argv = [sys.executable, "-I", "-S", SUPERVISOR, "{fd}", "--", "bash", "-c", command]
    if plan is not None:
        argv = [*plan.prefix, *argv]
    report_r, report_w = os.pipe()
    argv[argv.index("{fd}")] = str(report_w)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(ctx.workspace.root),
            env={**child_env(), CALL_MARKER: marker.partition("=")[2]},
            start_new_session=True,
            pass_fds=(report_w,),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    except BaseException:
        os.close(report_r)
        raise
    finally:
        os.close(report_w)
    return proc, report_r


def _process_notes(
    report: CallReport, timed_out: bool, refused: list[str], plan: SandboxPlan | None
) -> list[str]:
    """What the command left running (and was stopped), and what the sandbox refused."""
    notes: list[str] = []
    if report.stopped and not timed_out:
        shown = ", ".join(report.stopped[:5]) + (", ..." if len(report.stopped) > 5 else "")
        notes.append(
            f"(The command left {plural(len(report.stopped), 'background process', 'background processes')} "
            f"running ({shown}); {'it was' if len(report.stopped) == 1 else 'they were'} "
            "stopped when the command ended. Nothing a command starts outlives its call.)"
        )
    if report.left:
        notes.append(
            f"({plural(report.left, 'process', 'processes')} started by the command could not "
            "be stopped.)"
        )
    if refused:
        notes.append(
            f"(Refused: the command created {', '.join(refused)}, which the sandbox keeps "
            "read-only (git hooks, editor or agent config: another program would run it "
            f"later). It was moved aside to {plan.moved_to if plan else '?'}; to create it, "
            "use the write tool, which asks the user.)"
        )
    return notes


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
        "grep, glob, list and edit over cat, grep, find, ls and sed. Every process the command "
        "starts ends with it: background processes and daemons are stopped when the command "
        "ends, so run servers only for the duration of a command (start, use, then stop them in "
        "one call). When the result says it ran in the sandbox, the command could write only "
        "inside the workspace and a private /tmp, secret files were hidden, and the network was "
        "off unless the result says otherwise."
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
        if "\0" in command:
            raise ToolError("The command contains a NUL byte, which bash cannot take.")
        timeout_ms = params.timeout_ms or DEFAULT_TIMEOUT_MS
        plan = await _sandbox_plan(ctx, command)
        await ctx.authorize(
            PermissionQuery(
                tool=self.name,
                subject=command,
                title=command,
                input=input_dict(params),
                sandboxed=plan is not None and plan.complete,
            )
        )
        marker = f"{CALL_MARKER}={secrets.token_hex(8)}"
        proc, report_r = await _start(ctx, command, plan, marker)
        # start_new_session: the supervisor leads its own session and process group, which bash
        # and what it starts share unless they leave it (see supervise.py for those).
        pgid = proc.pid
        _running.add(proc.pid)
        started = start_time(proc.pid)
        capture = OutputCapture()
        saved = SavedOutput(ctx.session_id, f"bash-{ctx.call_id}", HEAD_BYTES + TAIL_BYTES)
        assert proc.stdout is not None
        pump = asyncio.ensure_future(self._pump(proc.stdout, capture, saved, ctx))
        try:
            timed_out = await self._wait(proc, pump, pgid, timeout_ms, ctx)
        except BaseException:
            pump.cancel()
            saved.close()
            await kill_process_group(pgid, CANCEL_GRACE)
            await asyncio.shield(self._end_call(proc, report_r, marker, started))
            if plan is not None:
                plan.refuse_created()
            raise
        report = await self._end_call(proc, report_r, marker, started)
        refused = plan.refuse_created() if plan is not None else []
        return self._answer(
            command,
            proc.returncode,
            timeout_ms if timed_out else None,
            capture,
            saved,
            report,
            refused,
            plan,
        )

    async def _wait(
        self,
        proc: asyncio.subprocess.Process,
        pump: asyncio.Future[None],
        pgid: int,
        timeout_ms: int,
        ctx: ToolContext,
    ) -> bool:
        """Until the command ends (or its time is up: then it is stopped) and its output closes;
        whether it timed out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        timed_out = False
        while proc.returncode is None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                timed_out = True
                break
            if pump.done():  # the output closed but the command still runs
                await asyncio.sleep(min(0.02, remaining))
            else:
                await asyncio.wait({pump}, timeout=min(0.1, remaining))
        if timed_out:
            ctx.progress(f"timed out after {timeout_ms} ms; stopping the command")
            await kill_process_group(pgid, TIMEOUT_GRACE)
        if proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exited(proc), 2.0)
        # The supervisor stopped everything the command left: the output closes now.
        await asyncio.wait({pump}, timeout=2.0)
        if not pump.done():  # something outside the supervisor's reach holds the pipe
            pump.cancel()
        return timed_out

    def _answer(
        self,
        command: str,
        returncode: int | None,
        timed_out_ms: int | None,
        capture: OutputCapture,
        saved: SavedOutput,
        report: CallReport,
        refused: list[str],
        plan: SandboxPlan | None,
    ) -> ToolResult:
        """The output (cut in the middle when long), then what happened to the processes, the
        sandbox and the exit code."""
        timed_out = timed_out_ms is not None
        body = capture.render().rstrip("\n") or "(no output)"
        parts = [body, ""]
        saved_path = saved.close()
        if capture.omitted > 0:
            parts.append(saved_note(capture, saved, saved_path))
        parts += _process_notes(report, timed_out, refused, plan)
        if plan is not None:
            parts.append(plan.describe())
        if timed_out:
            parts.append(
                f"Command timed out after {timed_out_ms} ms; it was killed, with every process it "
                "started. Output up to that point is shown above."
            )
        else:
            parts.append(_exit_text(returncode))
        return ToolResult(
            "\n".join(parts),
            is_error=timed_out,
            title=self.title({"command": command}),
            metadata={
                "exit_code": returncode,
                "timed_out": timed_out,
                "output_bytes": capture.total,
                "truncated": capture.omitted > 0,
                "saved_output": str(saved_path) if saved_path is not None else None,
                "sandboxed": plan is not None,
                "stopped_processes": len(report.stopped),
            },
        )

    @staticmethod
    async def _end_call(
        proc: asyncio.subprocess.Process, report_r: int, marker: str, started: int | None
    ) -> CallReport:
        """After the supervisor is gone: its report, and the server's own sweep of what escaped
        it (it was killed before it could stop them: a timeout, a command that killed it)."""
        try:
            raw = await asyncio.to_thread(_read_all, report_r)
        finally:
            os.close(report_r)
            _running.discard(proc.pid)
        report = CallReport.parse(raw)
        # Always the supervisor's session. When it gave no report (it was killed), also every
        # process carrying the call's marker, and every orphan adopted since the call began
        # (agentls run/serve are subreapers: see agentls.hardening).
        hostile = not report.complete
        swept = await asyncio.to_thread(
            functools.partial(
                sweep_call,
                proc.pid,
                proc.pid,
                marker=marker.encode() if hostile else None,
                adopted_since=started if hostile else None,
                protected=frozenset(_running),
            )
        )
        report.stopped += swept
        return report

    @staticmethod
    async def _exited(proc: asyncio.subprocess.Process) -> None:
        # Not proc.wait(): it also waits for the output pipe to close, which a background
        # process outside our reach may hold open. returncode is set as soon as bash exits.
        while proc.returncode is None:  # noqa: ASYNC110
            await asyncio.sleep(0.02)

    @staticmethod
    async def _pump(
        stream: asyncio.StreamReader, capture: OutputCapture, saved: SavedOutput, ctx: ToolContext
    ) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while chunk := await stream.read(_READ_CHUNK):
            capture.feed(chunk)
            saved.feed(chunk)
            now = loop.time()
            if now - last >= _PROGRESS_EVERY:
                last = now
                lines = [ln for ln in chunk.decode("utf-8", "replace").splitlines() if ln.strip()]
                if lines:
                    ctx.progress(lines[-1][:200])
