"""The one edit pipeline under every front end: VerifiedWorkspace, the tools' Workspace on a front
end's raw FileAccess (the disk's, an editor's buffers over LSP or ACP).

Every change goes the same way:
1. conflict check: each file must still be the text the change was made from (changed.py), or
   the change is merged into what the user changed meanwhile when their lines do not overlap
   (merge.py);
2. the edited file's problems before (before_after.py), and the edit's reach before (reach.py:
   the definitions it changes, the other files using them and their diagnostics now);
3. the write, by the front end (several files: all or none, natively where the front end can,
   else one by one, the written ones put back when a later one fails);
4. the problems after, compared with before, and the reach's new errors, in the outcome.

A call is made for a session (`for_session`: the front end's session, which an ACP editor is
addressed by); the session travels with each call down to the FileAccess."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from agentls.config import Settings
from agentls.verify.before_after import Before, FileChecks
from agentls.verify.board import DiagnosticsBoard
from agentls.verify.commands import relative_name
from agentls.verify.edit import Verifier
from agentls.verify.reach import PUSH_WAIT_S, reach_before
from agentls.verify.turn_edits import Checked, Recheck, TurnEdits
from agentls.workspace.changed import changed_while_waiting
from agentls.workspace.disk import DiskFiles
from agentls.workspace.merge import merge, rebase_reason
from agentls.workspace.protocol import EditOutcome, FileAccess, FileChange, Languages

log = logging.getLogger(__name__)


class VerifiedWorkspace:
    """Implements Workspace on `files`, verifying each change; `settings`: a getter of the
    settings in force (verifyCommands, verifyWaitS; none without it)."""

    def __init__(self, files: FileAccess, settings: Callable[[], Settings] | None = None) -> None:
        self.files = files
        self.verifier = Verifier(files.root, settings)
        # The editor's pushed diagnostics of every document (where an editor pushes them).
        self.board = DiagnosticsBoard()
        if files.diagnostics is not None:
            files.diagnostics.listen(self.board.push)
        self.checks = FileChecks(
            files.root, self.verifier, lambda: self.files.languages, files.diagnostics, self.board
        )
        self._turn_edits: dict[str | None, TurnEdits] = {}

    @classmethod
    def on(
        cls, files: FileAccess | None, root: Path | str | None, settings: Callable[[], Settings]
    ) -> VerifiedWorkspace:
        """The pipeline on a front end's `files`, else on the disk's under `root`."""
        if files is None:
            if root is None:
                raise ValueError("an agent needs a root or the front end's files")
            files = DiskFiles(Path(root), settings)
        return cls(files, settings)

    @property
    def root(self) -> Path:
        return self.files.root

    @property
    def languages(self) -> Languages:
        return self.files.languages

    def for_session(self, session: str | None) -> SessionWorkspace:
        """This workspace as one session's tools see it (every call made for `session`)."""
        return SessionWorkspace(self, session)

    # ---- reading ------------------------------------------------------------------------

    async def read_text(self, path: Path, session: str | None = None) -> str:
        return await self.files.read_text(path, session)

    async def _rebase(self, change: FileChange, session: str | None) -> FileChange | str:
        """The change to apply: as it is while its file is still the text it was made from,
        merged into what the file holds now when the user changed other lines meanwhile
        (workspace/merge.py); else why it must not be applied (the same lines changed, the file
        created or deleted meanwhile, a directory)."""
        try:
            current = await self.files.current_text(change.path, session)
        except IsADirectoryError:
            return f"could not write {change.path}: it is a directory"
        if current == change.old_text:
            return change
        if change.delete or current is None or change.old_text is None:
            return changed_while_waiting(change.old_text, current, self.files.waited) or ""
        merged = merge(change.old_text, current, change.new_text)
        if merged.text is None:
            return rebase_reason(merged, relative_name(change.path, self.root), self.files.waited)
        return FileChange(change.path, merged.text, current)

    # ---- one file -----------------------------------------------------------------------

    async def write_text(
        self, path: Path, new_text: str, old_text: str | None, session: str | None = None
    ) -> EditOutcome:
        asked = FileChange(path, new_text, old_text)
        rebased = await self._rebase(asked, session)
        if isinstance(rebased, str):
            return EditOutcome(applied=False, reason=rebased)
        new_text, old_text = rebased.new_text, rebased.old_text
        before = await self.checks.before(path, old_text)
        board = self.board if self.files.diagnostics is not None else None
        reach = await reach_before(
            self.for_session(session), path, path.as_uri(), old_text, new_text, board
        )
        outcome = await self.files.write_text(path, new_text, old_text, session)
        if not outcome.applied:
            return outcome
        if rebased is not asked:
            outcome.merged = new_text
        await self._verify(path, new_text, before, outcome)
        if reach is not None:
            outcome.reach = await reach.report(min(PUSH_WAIT_S, self.verifier.wait_s))
        self.turn_edits(session).wrote(path, before, outcome.version, reach)
        return outcome

    async def delete(self, path: Path, session: str | None = None) -> EditOutcome:
        return await self.files.delete(path, session)

    def turn_edits(self, session: str | None) -> TurnEdits:
        """What the session's running turn changed so far (its finish gate's files)."""
        return self._turn_edits.setdefault(session, TurnEdits())

    async def recheck(self, session: str | None) -> list[Checked]:
        """The diagnostics of the files the session's turn changed or reached, taken again."""
        board = self.board if self.files.diagnostics is not None else None
        read = partial(self.read_text, session=session)
        settings = self.verifier.settings() or Settings()
        wait_s, timeout_s = self.verifier.wait_s, settings.language_timeout_s
        recheck = Recheck(read, self.languages, board, wait_s, timeout_s)
        return await recheck.run(self.turn_edits(session))

    async def _verify(
        self, path: Path, new_text: str, before: Before, outcome: EditOutcome
    ) -> None:
        outcome.diagnostics = await self.checks.after(path, new_text, before, outcome.version)

    # ---- several files, all or none -----------------------------------------------------

    async def write_all(
        self, changes: Sequence[FileChange], session: str | None = None
    ) -> list[EditOutcome]:
        """Every file checked first (each still its old_text, none a directory), then the change
        applied as one: natively where the front end can (one workspace edit in an editor, one
        undo), else one file after another, the written ones put back when one fails. Each file
        written is verified as write_text verifies one."""
        if not changes:
            return []
        rebased = [await self._rebase(change, session) for change in changes]
        conflicts = [why if isinstance(why, str) else None for why in rebased]
        if any(why is not None for why in conflicts):
            names = ", ".join(
                relative_name(c.path, self.root)
                for c, why in zip(changes, conflicts, strict=True)
                if why
            )
            other = (
                f"Not applied: {names} did not take it, and this change is made to all its "
                "files or none, so none was written."
            )
            return [EditOutcome(applied=False, reason=why or other) for why in conflicts]
        asked, changes = changes, [c for c in rebased if isinstance(c, FileChange)]
        befores = [
            None if c.delete else await self.checks.before(c.path, c.old_text) for c in changes
        ]
        outcomes = await self.files.apply_all(changes, session)
        if outcomes is None:
            outcomes = await self._one_by_one(changes, session)
        if not all(outcome.applied for outcome in outcomes):
            return outcomes
        for one, change, outcome in zip(asked, changes, outcomes, strict=True):
            if one is not change:
                outcome.merged = change.new_text
        await asyncio.gather(
            *(
                self._verify(change.path, change.new_text, before, outcome)
                for change, before, outcome in zip(changes, befores, outcomes, strict=True)
                if before is not None
            )
        )
        self.turn_edits(session).wrote_all(changes, befores, outcomes)
        return outcomes

    async def _one_by_one(
        self, changes: Sequence[FileChange], session: str | None
    ) -> list[EditOutcome]:
        """The changes written in order; on a failure, those written before it are put back and
        every outcome says why nothing was applied."""
        outcomes: list[EditOutcome] = []
        for change in changes:
            outcome = await self._apply(change, session)
            if not outcome.applied:
                for done in reversed(changes[: len(outcomes)]):
                    await self._put_back(done, session)
                why = outcome.reason or "no reason given"
                return [
                    outcome
                    if c is change
                    else EditOutcome(applied=False, reason=f"not applied: {why}")
                    for c in changes
                ]
            outcomes.append(outcome)
        return outcomes

    async def _apply(self, change: FileChange, session: str | None) -> EditOutcome:
        if change.delete:
            return await self.files.delete(change.path, session)
        return await self.files.write_text(change.path, change.new_text, change.old_text, session)

    async def _put_back(self, change: FileChange, session: str | None) -> None:
        """Undo an applied change of a write_all that failed further on."""
        if change.old_text is None:
            outcome = await self.files.delete(change.path, session)
        else:
            now = None if change.delete else change.new_text
            outcome = await self.files.write_text(change.path, change.old_text, now, session)
        if not outcome.applied:
            log.warning("could not put %s back: %s", change.path, outcome.reason)


class SessionWorkspace:
    """A VerifiedWorkspace as the tools of one session see it: a Workspace whose every call is
    made for that session."""

    def __init__(self, workspace: VerifiedWorkspace, session: str | None) -> None:
        self.workspace = workspace
        self.session = session

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def languages(self) -> Languages:
        return self.workspace.languages

    async def read_text(self, path: Path) -> str:
        return await self.workspace.read_text(path, self.session)

    async def write_text(self, path: Path, new_text: str, old_text: str | None) -> EditOutcome:
        return await self.workspace.write_text(path, new_text, old_text, self.session)

    async def write_all(self, changes: Sequence[FileChange]) -> list[EditOutcome]:
        return await self.workspace.write_all(changes, self.session)

    async def delete(self, path: Path) -> EditOutcome:
        return await self.workspace.delete(path, self.session)

    def turn_edits(self) -> TurnEdits:
        return self.workspace.turn_edits(self.session)

    async def recheck(self) -> list[Checked]:
        return await self.workspace.recheck(self.session)


class DiskWorkspace(VerifiedWorkspace):
    """The pipeline on the plain filesystem (the CLI's, and the tests'): DiskFiles under `root`,
    its language servers and verification following `settings` (a getter; none without it)."""

    def __init__(self, root: Path, settings: Callable[[], Settings] | None = None) -> None:
        super().__init__(DiskFiles(root, settings), settings)
