"""`verifyCommands`: the user's own checks (a linter, a type checker) run after an edit.

The commands come from Settings.verify_commands, which the settings loader fills only from sources
the user trusts (their own config, initialization options, a workspace config that is trusted:
see agentls.trust); an untrusted workspace's commands never reach here."""

from __future__ import annotations

import asyncio
import fnmatch
import shlex
from collections.abc import Mapping
from pathlib import Path

from agentls.environ_scrub import child_environment

# A command that runs longer is killed, and reported as timed out.
COMMAND_TIMEOUT_S = 60.0
# The output kept of each command.
MAX_OUTPUT_CHARS = 4000


def relative_name(path: Path, root: Path) -> str:
    """The path relative to the root (posix), or the path itself when it lies outside."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def matching_commands(path: Path, root: Path, commands: Mapping[str, str] | None) -> list[str]:
    """The command lines to run for this path: each command whose glob matches the path (relative
    to the root) or its name, with {path} replaced by the quoted path."""
    rel = relative_name(path, root)
    return [
        command.replace("{path}", shlex.quote(str(path)))
        for pattern, command in (commands or {}).items()
        if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern)
    ]


async def run_verify_commands(path: Path, root: Path, commands: Mapping[str, str] | None) -> str:
    """Run the commands that match the path, one after the other, in the root (no stdin, no
    ANTHROPIC_* variables, a session of their own); one paragraph per command: passed or failed
    (with its exit code) and its output. Empty when none matches."""
    out: list[str] = []
    for line in matching_commands(path, root, commands):
        proc = await asyncio.create_subprocess_shell(
            line,
            cwd=root,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
            env=child_environment(),
            start_new_session=True,
        )
        try:
            data, _ = await asyncio.wait_for(proc.communicate(), COMMAND_TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            out.append(f"Check `{line}` timed out after {COMMAND_TIMEOUT_S:.0f} s.")
            continue
        text = data.decode("utf-8", "replace").strip()
        if len(text) > MAX_OUTPUT_CHARS:
            text = text[:MAX_OUTPUT_CHARS] + "\n... (output cut)"
        status = "passed" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
        out.append(f"Check `{line}` {status}" + (f":\n{text}" if text else "."))
    return "\n".join(out)
