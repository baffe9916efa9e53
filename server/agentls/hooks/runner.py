"""Running one hook command and reading its answer, as Claude Code's hooks reference says:
the event as JSON on stdin; exit 0 is success (stdout read as JSON when it is JSON), exit 2
blocks (stderr is the reason), any other exit is an error shown to the user that blocks
nothing. The command runs with the user's rights, outside the sandbox (it is the user's own
program), through bash in the workspace root with CLAUDE_PROJECT_DIR set to it, with the
environment agentls gives every process it starts (no model provider credentials), and is
killed (its whole process group) after its timeout."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentls.environ_scrub import child_environment
from agentls.hooks.config import Hook

# What of a hook's stdout or stderr is kept (and told to the model at most).
MAX_OUTPUT_CHARS = 10_000

Outcome = Literal["ok", "blocked", "error", "timeout"]


@dataclass
class HookRun:
    """One hook's run and what it answered."""

    hook: Hook
    outcome: Outcome
    duration_ms: int
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    # stdout as JSON, when the hook exited 0 and printed a JSON object.
    output: dict[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str:
        """What the hook said, for the user (and, when it blocks, for the model)."""
        if self.outcome == "timeout":
            return f"timed out after {self.hook.timeout_s:g} s"
        if self.outcome == "blocked":
            said = self.output.get("reason") or self.output.get("stopReason") or ""
            return self.stderr.strip() or str(said).strip()
        if self.outcome == "error":
            return self.stderr.strip() or f"exit code {self.exit_code}"
        return str(self.output.get("systemMessage") or "").strip()


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")[:MAX_OUTPUT_CHARS]


def hook_environment(root: Path) -> dict[str, str]:
    env = child_environment()
    env["CLAUDE_PROJECT_DIR"] = str(root)
    return env


def _kill(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run_hook(hook: Hook, payload: dict[str, Any], root: Path) -> HookRun:
    """Run the hook's command with the payload on stdin; never raises but for a cancel (which
    kills it)."""
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    shell = shutil.which("bash") or "/bin/sh"
    try:
        proc = await asyncio.create_subprocess_exec(
            shell,
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(root),
            env=hook_environment(root),
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
    except OSError as exc:
        return HookRun(hook, "error", took(), stderr=f"could not start: {exc}")
    data = json.dumps(payload).encode()
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), hook.timeout_s)
    except TimeoutError:
        _kill(proc)
        await proc.wait()
        return HookRun(hook, "timeout", took())
    except asyncio.CancelledError:
        _kill(proc)
        raise
    code = proc.returncode
    run = HookRun(hook, "ok", took(), exit_code=code, stdout=_text(out), stderr=_text(err))
    if code == 2:
        run.outcome = "blocked"
    elif code != 0:
        run.outcome = "error"
    else:
        run.output = _json_object(run.stdout)
        if run.output.get("decision") == "block" or run.output.get("continue") is False:
            run.outcome = "blocked"
        if _specific(run.output).get("permissionDecision") == "deny":
            run.outcome = "blocked"
    return run


def _json_object(text: str) -> dict[str, Any]:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return {}
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _specific(output: dict[str, Any]) -> dict[str, Any]:
    value = output.get("hookSpecificOutput")
    return value if isinstance(value, dict) else {}


@dataclass
class Verdict:
    """What the hooks of one event decided together."""

    runs: list[HookRun] = field(default_factory=list)
    # Exit 2 or `decision: "block"`: the reasons (stderr, or `reason`).
    blocked: bool = False
    reasons: list[str] = field(default_factory=list)
    # PreToolUse's hookSpecificOutput.permissionDecision: the strictest (deny > ask > allow).
    permission: Literal["allow", "deny", "ask"] | None = None
    permission_reasons: list[str] = field(default_factory=list)
    # additionalContext (and, for UserPromptSubmit and SessionStart, plain stdout).
    context: list[str] = field(default_factory=list)
    # `continue: false`: the agent stops after this (stopReason said to the user).
    stop: bool = False
    stop_reason: str | None = None
    # PreToolUse's hookSpecificOutput.updatedInput (Claude Code's keys): the call's new input.
    updated_input: dict[str, Any] | None = None

    @property
    def reason(self) -> str:
        return "\n".join(r for r in [*self.reasons, *self.permission_reasons] if r)


_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


def verdict_of(runs: list[HookRun], plain_stdout_is_context: bool) -> Verdict:
    verdict = Verdict(runs=runs)
    for run in runs:
        if run.exit_code == 2:
            verdict.blocked = True
            verdict.reasons.append(run.stderr.strip())
            continue
        if run.outcome in ("error", "timeout"):
            continue
        output = run.output
        if not output and plain_stdout_is_context and run.stdout.strip():
            verdict.context.append(run.stdout.strip())
        if output.get("decision") == "block":
            verdict.blocked = True
            verdict.reasons.append(str(output.get("reason") or "").strip())
        if output.get("continue") is False:
            verdict.stop = True
            verdict.stop_reason = str(output.get("stopReason") or "") or verdict.stop_reason
        specific = _specific(output)
        decision = specific.get("permissionDecision")
        if decision in _STRICTNESS:
            if (
                verdict.permission is None
                or _STRICTNESS[decision] > _STRICTNESS[verdict.permission]
            ):
                verdict.permission = decision
            reason = specific.get("permissionDecisionReason")
            if reason and decision != "allow":
                verdict.permission_reasons.append(str(reason))
        updated = specific.get("updatedInput")
        if isinstance(updated, dict):
            verdict.updated_input = updated
        context = specific.get("additionalContext")
        if isinstance(context, str) and context.strip():
            verdict.context.append(context.strip())
    return verdict


async def run_hooks(
    hooks: list[Hook], payload: dict[str, Any], root: Path, plain_stdout_is_context: bool = False
) -> Verdict:
    """Run the hooks of one event at once (as Claude Code does) and combine their answers."""
    if not hooks:
        return Verdict()
    runs = await asyncio.gather(*(run_hook(h, payload, root) for h in hooks))
    return verdict_of(list(runs), plain_stdout_is_context)
