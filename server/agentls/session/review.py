"""Review "after" (the `review` setting): an edit the rules would ask about is applied at once and
kept pending review; the user keeps or undoes it later, a file or some hunks at a time.

- Which calls: edit, write and rename whose rules answer "ask", every file inside the workspace
  and none a protected path (.git, .agentls, ...: those still ask). "deny" still denies, a path
  outside the workspace still asks, plan mode still refuses, bash and the other tools are
  unchanged (CallContext.authorize calls applies_at_once).
- What is pending: per (session, path) the base, the text the user last kept (the file before
  the agent's first unreviewed change; None when it created the file), and the agent's latest
  text, the last `after` the session recorded for the path (store/review_state.py). Later edits
  keep the first base. Hunks are workspace/hunks.py's, base -> agent, numbered from 0.
- keep: the file drops out, or its base takes the kept hunks. undo: the file goes back to its
  base (a created file is deleted), or loses the undone hunks, through the Workspace as one edit
  (Ctrl+Z in the editor); what it wrote is recorded as a change of the session's last message,
  so the agent's latest text is what the file now is. A file whose text is no longer the agent's
  latest is merged into: the undo is applied to the user's text (workspace/merge.py), their
  lines kept; when their change and the undo touch the same lines, nothing is written and the
  answer is a conflict with the three versions.
- The model: an undone file is forgotten by the session's read ledger, so edit and write refuse
  it until the model reads it again and sees what the user left.
- The `review` event carries the whole pending list after each change to it.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentls.config import Settings
from agentls.events import ReviewEvent, ReviewFile, ReviewHunk
from agentls.permission.protected import is_protected_path
from agentls.protocol.review import RevertConflict
from agentls.session.revert import NOT_ITS_OWN, not_its_own_file
from agentls.session.state import SessionState
from agentls.store import Store
from agentls.tools.base import PermissionQuery, content_hash
from agentls.verify.workspace import VerifiedWorkspace
from agentls.workspace.hunks import Hunk, apply, hunks
from agentls.workspace.merge import merge
from agentls.workspace.protocol import Workspace

EventSink = Callable[[Any], None]

# The tools whose "ask" review "after" answers by applying the change at once.
REVIEWED_TOOLS = frozenset({"edit", "write", "rename", "apply_code_action"})


class ReviewFailed(Exception):
    """The workspace did not apply an undo (the editor refused it): nothing changed."""


def applies_at_once(
    settings: Settings,
    query: PermissionQuery,
    is_outside: Callable[[Path], bool],
    relative: Callable[[Path], str],
    root: Path | None = None,
) -> bool:
    """Whether a call the rules ask about is applied without the question, pending review."""
    if settings.review != "after" or query.tool not in REVIEWED_TOOLS:
        return False
    if query.changes:
        paths = [c.path for c in query.changes]
    elif query.path is not None and query.new_text is not None:
        paths = [query.path]
    else:
        return False
    return not any(is_outside(p) or is_protected_path(relative(p), root) for p in paths)


# The hunks of recent (base, agent) pairs, by their texts' hashes: each edit sends the whole
# pending list again, and a file the edit did not touch has the hunks already made (a diff of a
# 2,000-line file takes a few milliseconds, of 50,000 lines ~0.2 s). Only the hunks are kept.
_HUNKS: OrderedDict[tuple[str, str], list[ReviewHunk]] = OrderedDict()
HUNKS_KEPT = 512


def review_hunks(base: str, agent: str) -> list[ReviewHunk]:
    key = (content_hash(base), content_hash(agent))
    found = _HUNKS.get(key)
    if found is not None:
        _HUNKS.move_to_end(key)
        return found
    made = [
        ReviewHunk(
            index=i,
            old_start=h.old_start,
            old_lines=h.old_end - h.old_start,
            new_start=h.new_start,
            new_lines=len(h.new_lines),
            diff=h.unified(),
        )
        for i, h in enumerate(hunks(base, agent))
    ]
    _HUNKS[key] = made
    if len(_HUNKS) > HUNKS_KEPT:
        _HUNKS.popitem(last=False)
    return made


def review_file(path: str, base: str | None, agent: str) -> ReviewFile:
    return ReviewFile(path=path, base=base, agent=agent, hunks=review_hunks(base or "", agent))


async def pending_files(store: Store, session_id: str) -> list[ReviewFile]:
    """What the session's review holds (files whose agent text differs from their base)."""
    rows = await store.list_review_pending(session_id)
    return [review_file(path, base, agent) for path, base, agent in rows if agent != base]


class PendingReview:
    """What a call applied at once records (RecordingWorkspace calls it after the write)."""

    def __init__(self, store: Store, emit: EventSink, session_id: str) -> None:
        self._store = store
        self._emit = emit
        self._session_id = session_id

    async def record(self, changes: Sequence[tuple[Path, str | None]]) -> None:
        """Each (path, the text before the change) is pending, then the review event."""
        for path, before in changes:
            await self._store.add_review_pending(self._session_id, str(path), before)
        files = await pending_files(self._store, self._session_id)
        self._emit(ReviewEvent(session_id=self._session_id, files=files))


def chosen_hunks(all_hunks: list[Hunk], indexes: Sequence[int] | None, path: str) -> list[int]:
    """The hunk indexes asked for (all when None), sorted; ValueError names a bad one."""
    if indexes is None:
        return list(range(len(all_hunks)))
    for index in indexes:
        if not 0 <= index < len(all_hunks):
            raise ValueError(f"hunks: {path} has no hunk {index} (it has {len(all_hunks)})")
    return sorted(set(indexes))


async def _read(workspace: Workspace, path: Path) -> str | None:
    try:
        return await workspace.read_text(path)
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return None


def _merged(agent: str, current: str | None, target: str | None) -> str | None:
    """The change agent -> target merged into the file's text now (None: a conflict, or texts
    that cannot be merged: a missing file, one that is not a file of its own, a deletion)."""
    if current is None or current == NOT_ITS_OWN or target is None:
        return None
    return merge(agent, current, target).text


class SessionReview:
    """agent/listReview and agent/review of Agent (which sets these attributes)."""

    store: Store
    workspace: VerifiedWorkspace
    root: Path
    _sessions: OrderedDict[str, SessionState]
    # One answer at a time: two keeps of one file's hunks sent at once must not lose one.
    _review_lock: asyncio.Lock | None = None

    def emit(self, event: Any) -> None:
        raise NotImplementedError  # Agent's

    async def session(self, session_id: str) -> SessionState:
        raise NotImplementedError  # Agent's

    def review_path(self, path: str) -> str:
        """The key a file is pending under: its absolute real path (a relative one is from the
        workspace root)."""
        return os.path.realpath(os.path.join(self.root, os.path.expanduser(path)))

    async def list_review(self, session_id: str) -> list[ReviewFile]:
        """The files pending review in the session; KeyError if unknown."""
        await self.session(session_id)
        return await pending_files(self.store, session_id)

    async def review(
        self,
        session_id: str,
        path: str,
        action: str,
        hunk_indexes: Sequence[int] | None = None,
    ) -> tuple[list[ReviewFile], RevertConflict | None]:
        """Keep or undo a pending file, whole or some hunks; what stays pending and the conflict
        (nothing written) when the file is no longer the agent's text. KeyError: unknown
        session; ValueError: the path is not pending or a hunk does not exist; ReviewFailed:
        the workspace refused the undo."""
        if self._review_lock is None:
            self._review_lock = asyncio.Lock()
        async with self._review_lock:
            return await self._review(session_id, path, action, hunk_indexes)

    async def _review(
        self, session_id: str, path: str, action: str, hunk_indexes: Sequence[int] | None
    ) -> tuple[list[ReviewFile], RevertConflict | None]:
        state = await self.session(session_id)
        key = self.review_path(path)
        rows = {
            p: (base, agent) for p, base, agent in await self.store.list_review_pending(session_id)
        }
        if key not in rows or rows[key][0] == rows[key][1]:
            raise ValueError(f"path: {path} has no change pending review in this session")
        base, agent = rows[key]
        all_hunks = hunks(base or "", agent)
        indexes = chosen_hunks(all_hunks, hunk_indexes, path)
        whole = len(indexes) == len(all_hunks)
        conflict = None
        if action == "keep":
            if whole:
                await self.store.drop_review_pending(session_id, key)
            else:
                kept = apply(base or "", [all_hunks[i] for i in indexes])
                await self.store.set_review_base(session_id, key, kept)
        elif action == "undo":
            conflict = await self._undo(state, key, base, agent, all_hunks, indexes, whole)
        else:
            raise ValueError(f"action: must be keep or undo (got {action!r})")
        files = await pending_files(self.store, session_id)
        if conflict is None:
            self.emit(ReviewEvent(session_id=session_id, files=files))
        return files, conflict

    async def _undo(
        self,
        state: SessionState,
        key: str,
        base: str | None,
        agent: str,
        all_hunks: list[Hunk],
        indexes: list[int],
        whole: bool,
    ) -> RevertConflict | None:
        path = Path(key)
        workspace = self.workspace.for_session(state.record.id)
        # A link out or a directory where the file was: never written through (a conflict).
        current = NOT_ITS_OWN if not_its_own_file(path) else await _read(workspace, path)
        undone = set(indexes)
        target = (
            base
            if whole
            else apply(base or "", [h for i, h in enumerate(all_hunks) if i not in undone])
        )
        typed = current != agent  # the user changed the file since the agent's edit
        if typed:
            # The undo merged into the user's text (workspace/merge.py); lines both changed
            # are a conflict, never written over.
            merged = _merged(agent, current, target)
            if merged is None:
                return RevertConflict(path=key, before=base, agent=agent, current=current)
            target = merged
        if target is None:
            outcome = await workspace.delete(path)
        else:
            outcome = await workspace.write_text(path, target, current)
        if not outcome.applied:
            raise ReviewFailed(f"{key} was not changed: {outcome.reason or 'the edit was refused'}")
        session_id = state.record.id
        if target is not None and state.messages:
            # The file's text now, as the agent's latest: a later undo or revert starts from it.
            await self.store.add_file_change(
                session_id, state.messages[-1].id, key, current, target
            )
        if whole:
            await self.store.drop_review_pending(session_id, key)
        elif typed and base is not None and current is not None:
            # What stays pending is the agent's other hunks, not the user's typing: the base
            # takes the typing too.
            rebased = _merged(agent, current, base)
            if rebased is not None:
                await self.store.set_review_base(session_id, key, rebased)
        state.ledger.forget(path)  # the model must read it again before changing it
        return None
