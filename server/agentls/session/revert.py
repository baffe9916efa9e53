"""Checkpoints and rewind: every user message is a checkpoint, and a revert goes back to just
before one (agent/revert, `agentls rewind`).

- scope "code": the files the agent changed since that message get back their text from just
  before it (the `before` of each path's first recorded change from there on), as ONE workspace
  edit (Workspace.write_all: one undo in the editor). A file the user changed since the agent's
  last version gets the agent's changes taken out of their text (workspace/merge.py), their
  lines kept; where both changed the same lines it is never overwritten: it is a conflict,
  reported with its three versions; a file already back as it was is skipped.
- scope "conversation": that message and every later one are marked reverted (kept for the
  record, no longer sent to the model); the message's text goes back to the prompt box.
- "both": both. A dry run computes the same answer and changes nothing.

The last revert is kept (store/checkpoints.py) so agent/unrevert can redo it: the messages are
un-marked and each restored file gets the agent's text back (with the same merge and conflict
rule for a file changed since the revert). A prompt sent after the revert clears it.

Reverting to a message older than a compaction summary works from the whole stored history: a
summary that is reverted no longer starts the session (summary_message_id goes back to the last
summary still in force, or to none), so the model sees the older messages again, as they were.
bash effects are not undone: the commands run since the checkpoint are listed instead.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agentls.history import ApiHistory, Message
from agentls.session.state import SessionBusyError, SessionState
from agentls.store import Store
from agentls.store.checkpoints import RestoredFile
from agentls.store.session_locks import SessionLockedError
from agentls.workspace.merge import merge
from agentls.workspace.protocol import FileChange, Workspace

SCOPES = ("code", "conversation", "both")


class NothingToRedo(Exception):
    """agent/unrevert with no revert to redo (none yet, or a prompt was sent since)."""


class NotACheckpoint(ValueError):
    """The messageId of a revert is not one of the user's messages."""


@dataclass
class Conflict:
    """A file left alone: its text before the agent's change, the agent's, and now (None: the
    file did not exist)."""

    path: str
    before: str | None
    agent: str | None
    current: str | None


@dataclass
class RevertOutcome:
    # The files restored (with dry_run: that would be).
    files: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    # The bash commands run since the checkpoint: their effects are not undone.
    bash_commands: list[str] = field(default_factory=list)
    # scope conversation/both: the text of the message gone back to.
    prompt: str | None = None
    # Why the code part could not be applied (the editor refused the edit, ...): then nothing
    # of the revert was done.
    problems: list[str] = field(default_factory=list)
    # The messages marked reverted (ids, oldest first).
    message_ids: list[str] = field(default_factory=list)

    @property
    def bash_not_undone(self) -> bool:
        return bool(self.bash_commands)


@dataclass
class UnrevertOutcome:
    files: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    # The messages that came back (ids, oldest first).
    message_ids: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@asynccontextmanager
async def held_idle(state: SessionState, store: Store, owner: str) -> AsyncIterator[None]:
    """Hold an idle session for a revert: nothing running or waiting in this process (else
    SessionBusyError), its lock, and its turn lock in the store (a turn of it in another process
    is SessionBusyError too); loaded until the end."""
    session_id = state.record.id
    if state.busy or state.queue or state.lock.locked():
        raise SessionBusyError(f"session {session_id!r} is busy; cancel the turn first")
    state.users += 1
    try:
        async with state.lock:
            try:
                await store.lock_session(session_id, owner)
            except SessionLockedError as exc:
                raise SessionBusyError(str(exc)) from None
            try:
                yield
            finally:
                await store.unlock_session(session_id, owner)
    finally:
        state.users -= 1


# What a file that is no longer a file of its own reads as: never equal to a recorded text.
NOT_ITS_OWN = "\0(not a file of its own now: a link, a directory or a device)"


def not_its_own_file(path: Path) -> bool:
    """Whether a path agentls recorded (a real path when written) no longer names a regular file
    of its own on disk: it, or a folder on its way, is now a link to elsewhere (a command the
    agent ran can leave a.txt -> ~/.bashrc), or it is a directory, a FIFO, a device. A revert or
    an undo never writes such a path: it is a conflict."""
    if os.path.realpath(path) != os.path.normpath(path):
        return True
    try:
        return not stat.S_ISREG(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True


async def current_text(workspace: Workspace, path: Path) -> str | None:
    """The file's text now (an open buffer's); None when it does not exist; NOT_ITS_OWN when it
    is no longer a file of its own (not_its_own_file), whatever a buffer of it holds."""
    if not_its_own_file(path):
        return NOT_ITS_OWN
    try:
        return await workspace.read_text(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (IsADirectoryError, UnicodeDecodeError, OSError):
        return "\0(not a text file)"  # never equal to a text agentls recorded


def merged_into(current: str | None, base: str | None, target: str | None) -> str | None:
    """The change base -> target applied to a file the user changed since it was `base`, their
    lines kept (workspace/merge.py); None when it cannot be: lines both changed, or a file
    missing, created, deleted or not a text of its own on either side."""
    texts = (current, base, target)
    if any(t is None or t.startswith("\0") for t in texts):
        return None
    assert current is not None and base is not None and target is not None
    return merge(base, current, target).text


def checkpoint_index(messages: Sequence[Message], message_id: str, session_id: str) -> int:
    """Where the user message `message_id` is in the whole history; KeyError when it is not in
    it, NotACheckpoint when it is not a message the user sent."""
    for index, message in enumerate(messages):
        if message.id == message_id:
            if message.role != "user" or message.summary() is not None:
                what = "a compaction summary" if message.summary() else f"an {message.role} message"
                raise NotACheckpoint(f"{message_id!r} is {what}, not a message the user sent")
            return index
    raise KeyError(f"unknown messageId {message_id!r} in session {session_id!r}")


def checkpoints_of(history: Sequence[Message]) -> list[Message]:
    """The messages the user sent (a compaction summary is not one), oldest first."""
    return [m for m in history if m.role == "user" and m.summary() is None]


def bash_commands(messages: Sequence[Message]) -> list[str]:
    return [
        str(part.input.get("command", ""))
        for message in messages
        for part in message.tool_parts()
        if part.tool == "bash"
    ]


async def revert_messages(
    state: SessionState,
    store: Store,
    workspace: Workspace,
    message_id: str,
    scope: str = "both",
    dry_run: bool = False,
) -> RevertOutcome:
    """Go back to just before the user message `message_id` (see the module's docstring). The
    session must be held idle (held_idle)."""
    session_id = state.record.id
    history = await store.load_messages(session_id)
    start = checkpoint_index(history, message_id, session_id)
    if history[start].reverted and not dry_run:  # it would replace the last revert's redo
        raise NotACheckpoint(f"{message_id!r} is reverted already: agent/unrevert brings it back")
    affected = history[start:]
    # The sub-agents' sessions started since (the task tool's): their changes and commands too.
    subs = await store.sub_sessions(session_id, history[start].created_at)
    ran = list(affected)
    for sub in subs:
        ran += await store.load_messages(sub, repair=False)
    outcome = RevertOutcome(bash_commands=bash_commands(ran))
    restore: list[RestoredFile] = []
    if scope in ("code", "both"):
        changes = await store.range_file_changes(session_id, [m.id for m in affected], subs)
        befores: dict[str, str | None] = {}
        agents: dict[str, str | None] = {}
        for path, before, after in changes:
            befores.setdefault(path, before)
            agents[path] = after
        for path, before in befores.items():
            current = await current_text(workspace, Path(path))
            if current == before:
                continue  # already as it was
            if current != agents[path]:
                # The user changed it since: the agent's changes taken out of their text.
                merged = merged_into(current, agents[path], before)
                if merged is None:
                    outcome.conflicts.append(Conflict(path, before, agents[path], current))
                else:
                    restore.append(RestoredFile(path, merged, current))
                continue
            restore.append(RestoredFile(path, before, agents[path]))
    outcome.files = [f.path for f in restore]
    dropped: list[Message] = []
    if scope in ("conversation", "both"):
        outcome.prompt = history[start].text()
        dropped = [m for m in affected if not m.reverted]
        outcome.message_ids = [m.id for m in dropped]
    if dry_run:
        return outcome
    outcome.problems = await _write(state, workspace, [_back(f) for f in restore])
    if outcome.problems:
        outcome.files = []
        return outcome
    if scope == "code":
        await _follow_review(store, session_id, history[-1].id, [_back(f) for f in restore])
    for message in dropped:
        message.reverted = True
        await store.update_message(message)
    if dropped:
        await _start_at_last_summary(state, store, history)
    await store.save_revert(session_id, message_id, scope, outcome.message_ids, restore)
    return outcome


async def unrevert_messages(
    state: SessionState, store: Store, workspace: Workspace
) -> UnrevertOutcome:
    """Redo the session's last revert: its messages back, each file it restored back to the
    agent's text unless it changed since (a conflict). NothingToRedo when there is none (a
    prompt was sent since). The session must be held idle (held_idle)."""
    session_id = state.record.id
    record = await store.last_revert(session_id)
    if record is None:
        raise NothingToRedo(
            f"nothing to redo in session {session_id!r}: no revert since the last prompt"
        )
    outcome = UnrevertOutcome()
    redo: list[FileChange] = []
    for restored in record.files:
        current = await current_text(workspace, Path(restored.path))
        if current == restored.agent:
            continue
        path = Path(restored.path)
        if current != restored.before:
            merged = merged_into(current, restored.before, restored.agent)
            if merged is None:
                outcome.conflicts.append(
                    Conflict(restored.path, restored.before, restored.agent, current)
                )
            else:
                redo.append(FileChange(path, merged, current))
            continue
        redo.append(FileChange(path, restored.agent or "", restored.before, restored.agent is None))
    outcome.problems = await _write(state, workspace, redo)
    if outcome.problems:
        return outcome  # nothing changed: the revert can still be redone
    outcome.files = [str(c.path) for c in redo]
    history = await store.load_messages(session_id)
    if record.scope == "code" and history:
        await _follow_review(store, session_id, history[-1].id, redo)
    back = set(record.message_ids)
    for message in history:
        if message.id in back and message.reverted:
            message.reverted = False
            await store.update_message(message)
            outcome.message_ids.append(message.id)
    if outcome.message_ids:
        await _start_at_last_summary(state, store, history)
    await store.clear_revert(session_id)
    return outcome


def _back(restored: RestoredFile) -> FileChange:
    """The change that puts the text from before the agent's back."""
    path = Path(restored.path)
    return FileChange(path, restored.before or "", restored.agent, restored.before is None)


async def _write(state: SessionState, workspace: Workspace, changes: list[FileChange]) -> list[str]:
    """Apply the changes as one edit; the reasons it was not applied ([] when it was)."""
    if not changes:
        return []
    outcomes = await workspace.write_all(changes)
    if all(o.applied for o in outcomes):
        for change in changes:
            state.ledger.forget(change.path)  # what the model read of it is no longer there
        return []
    reasons = [o.reason for o in outcomes if not o.applied and o.reason]
    return list(dict.fromkeys(reasons)) or ["the edit was not applied"]


async def _follow_review(
    store: Store, session_id: str, message_id: str, changes: list[FileChange]
) -> None:
    """Review "after" (session/review.py) after a code-only revert or its redo, whose messages
    stay: a file pending review that it rewrote stays pending from the same base to what it holds
    now (recorded as a change of the session's last message, as review's own undo is), so an undo
    compares with the file's real text; one it deleted leaves the review. (A conversation revert
    needs nothing: the changes of reverted messages do not count.)"""
    pending = {path for path, _base, _agent in await store.list_review_pending(session_id)}
    for change in changes:
        path = str(change.path)
        if path not in pending:
            continue
        if change.delete:
            await store.drop_review_pending(session_id, path)
        else:
            await store.add_file_change(
                session_id, message_id, path, change.old_text, change.new_text
            )


async def _start_at_last_summary(state: SessionState, store: Store, history: list[Message]) -> None:
    """Make the session start at the last compaction summary still in force (not reverted), or
    at its first message when there is none, in the store and in memory; the model is sent the
    new history whole at the next step."""
    summaries = [m for m in history if m.summary() is not None and not m.reverted]
    start = summaries[-1] if summaries else None
    summary_id = start.id if start is not None else None
    if summary_id != state.record.summary_message_id:
        await store.set_summary_message(state.record.id, summary_id)
        state.record.summary_message_id = summary_id
    state.messages = history[history.index(start) :] if start is not None else history
    state.api = ApiHistory()
