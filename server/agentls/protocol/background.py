"""Wire models of background sessions (session/background.py): a session started with
agent/prompt `background: true` runs in its own git worktree on its own branch; agent/prompt's
answer and each agent/listSessions entry of one carry its BackgroundInfo."""

from __future__ import annotations

from typing import Literal

from agentls.protocol.base import Result


class ChangedFileInfo(Result):
    path: str
    # Lines added and removed against the base commit; null for a binary file.
    added: int | None
    removed: int | None


class BackgroundInfo(Result):
    """Where a background session works and how it is doing. state: "running" (its run lives: the
    CLI's detached process, or the turn the language server runs for agent/prompt `background`),
    "waiting" (a question of the server's run waits: its permission-request came as an agent/event
    with its session id, and agent/approve with that id answers it; the CLI's detached run never
    waits, it refuses calls that would ask as unattended), "done" or "failed" (reason says why;
    "interrupted ..." after a crash or a kill of its run or of the server, with the command that
    resumes it)."""

    state: Literal["running", "waiting", "done", "failed"]
    reason: str | None = None
    branch: str
    worktree: str
    # The commit the worktree was made from (its changes are against it).
    base: str
    # What differs from base now, new files included; null when the worktree is gone.
    changed_files: list[ChangedFileInfo] | None = None
