"""Revert: undo the file changes the tools made from a message on, and mark those messages
reverted (kept for the record, no longer sent to the model)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentls.session.state import SessionState
from agentls.store import Store
from agentls.workspace.protocol import Workspace


@dataclass
class RevertOutcome:
    files: list[str]
    bash_not_undone: bool
    problems: list[str]


async def revert_messages(
    state: SessionState, store: Store, workspace: Workspace, message_id: str
) -> RevertOutcome:
    """Undo every file change the tools made from `message_id` on (newest first) and mark those
    messages reverted. The session must be idle and held loaded (Agent.revert)."""
    session_id = state.record.id
    ids = [m.id for m in state.messages]
    if message_id not in ids:
        raise KeyError(f"unknown messageId {message_id!r} in session {session_id!r}")
    affected = state.messages[ids.index(message_id) :]
    changes = await store.list_file_changes(session_id, [m.id for m in affected])
    # The state to restore for each path is the one before its first change in the range.
    targets: dict[str, str | None] = {}
    for _, changed_path, before, _after in changes:
        targets.setdefault(changed_path, before)
    files: list[str] = []
    problems: list[str] = []
    for path_str, before in reversed(list(targets.items())):
        path = Path(path_str)
        try:
            current: str | None = await workspace.read_text(path)
        except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
            current = None
        if current == before:
            continue
        if before is None:
            outcome = await workspace.delete(path)
        else:
            outcome = await workspace.write_text(path, before, current)
        if outcome.applied:
            files.append(path_str)
            state.ledger.forget(path)
        else:
            problems.append(f"{path_str}: {outcome.reason}")
    for message in affected:
        if not message.reverted:
            message.reverted = True
            await store.update_message(message)
    bash_ran = any(p.tool == "bash" for m in affected for p in m.tool_parts())
    return RevertOutcome(files=files, bash_not_undone=bash_ran, problems=problems)
