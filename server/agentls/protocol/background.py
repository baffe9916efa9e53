"""Wire models of background sessions (session/background.py): a session started with
agent/prompt `background: true` runs in its own git worktree on its own branch; agent/prompt's
answer and each agent/listSessions entry of one carry its BackgroundInfo."""

from __future__ import annotations

from typing import Any, Literal

from agentls.protocol.base import Result


class ChangedFileInfo(Result):
    path: str
    # Lines added and removed against the base commit; null for a binary file.
    added: int | None
    removed: int | None


class WaitingQuestionInfo(Result):
    """A question a detached background run (`agentls run --background`) waits on. Answer it with
    agent/approve: the background session's id, requestId this id, decision "once" or "reject"
    ("always" is taken as "once": the run allows that call only), and for ask_user the answer in
    feedback; `edit` is refused. A question no longer waited on is an error naming requestId."""

    request_id: str
    # The tool asking ("bash", "write", "ask_user", "exit_plan", ...) and its call as the
    # approval prompt shows it: title, input (bash's command, ask_user's question and choices),
    # the proposed change's diff.
    tool: str
    title: str
    input: dict[str, Any]
    diff: str | None = None
    # The session asking when it is a sub-agent of the background session.
    asked_by: str | None = None


class BackgroundInfo(Result):
    """Where a background session works and how it is doing. state: "running" (its run lives: the
    CLI's detached process, or the turn the language server runs for agent/prompt `background`),
    "waiting" (a question of the server's run waits: its permission-request came as an agent/event
    with its session id, and agent/approve with that id answers it; a question of the CLI's
    detached run, `agentls run --background`, is in `questions` instead), "done" or "failed" (reason says why;
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
    # The questions its detached run waits on (state "waiting"), oldest first.
    questions: list[WaitingQuestionInfo] = []
