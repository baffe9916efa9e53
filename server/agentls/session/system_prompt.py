"""The system prompt: who the agent is, how it works here, and the environment it runs in."""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

BASE_PROMPT = """You are agentls, a coding agent working inside the user's editor.

You help with software engineering tasks in the workspace below, using the tools you are given.
- Read a file before you edit or overwrite it; edits apply to the user's editor buffers.
- Prefer `edit` for changes to existing files (old_string must match exactly once) and `write` for new files.
- After an edit, look at the diagnostics reported in the tool result and fix what you broke.
- To find where code is defined or used, or to rename it, use `symbols`, `definition`, `references`, `hover`, `callers` and `rename` (the language servers' answers) rather than grep.
- Run the project's tests or checks with `bash` to prove a change works, when there are any.
- Independent reads and searches can be requested together in one message; they run concurrently.
- For multi-step work (three steps or more, or several files), keep a todo list with `todowrite`: write the steps first, mark one in_progress as you start it and completed as soon as it is done. Skip it for a single, simple step.
- If the user rejects a tool call, follow their feedback instead of retrying the same call.
- Be concise. Say what you changed and how you verified it."""


def git_branch(root: Path) -> str | None:
    """The checked-out branch, read from .git/HEAD (no subprocess: this runs at every turn)."""
    for directory in (root, *root.parents):
        head = directory / ".git"
        if head.is_file():
            # A worktree or submodule: ".git" holds "gitdir: <path>".
            try:
                target = head.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip()
            except OSError:
                return None
            head = (directory / target).resolve()
        if head.is_dir():
            try:
                ref = (head / "HEAD").read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if ref.startswith("ref: refs/heads/"):
                return ref.removeprefix("ref: refs/heads/")
            return f"(detached at {ref[:12]})"
    return None


def environment_block(root: Path, today: date | None = None) -> str:
    lines = [
        "<env>",
        f"Workspace root: {root}",
        f"Platform: {platform.system().lower()} ({platform.machine()})",
        f"Today's date: {(today or date.today()).isoformat()}",
    ]
    branch = git_branch(root)
    if branch:
        lines.append(f"Git branch: {branch}")
    else:
        lines.append("Git repository: no")
    lines.append("</env>")
    return "\n".join(lines)


PLAN_PROMPT = """<mode>plan</mode>
You are in plan mode: you are planning, not changing anything. Investigate with read-only tools (read, glob, grep, list, the language tools, read-only bash such as `ls`, `cat`, `git log`); edits, writes, renames and commands that change anything are refused. When the plan is complete (the steps, the files each changes, how to verify), call `exit_plan` with it: the user approves it (you are then in build mode and carry it out) or gives feedback to plan further."""


def build_system(
    root: Path, mode: str = "build", extra: str | None = None
) -> list[dict[str, object]]:
    text = BASE_PROMPT + "\n\n" + environment_block(root)
    if mode == "plan":
        text += "\n\n" + PLAN_PROMPT
    if extra:
        text += "\n\n" + extra
    return [{"type": "text", "text": text}]
