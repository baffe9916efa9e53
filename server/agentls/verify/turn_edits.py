"""What a turn changed, for its finish gate (session/finish_gate.py): every file the turn wrote and
every file that uses what it changed (an edit's reach), each with its diagnostics from before the
turn first touched it; and, when the turn is about to end, the same files' diagnostics again, for
the exact texts written.

The edit pipeline (workspace.py) records each applied edit here, once per file: the first
baseline of a file is kept (the one from before the turn's first edit of it, or from before the
edit whose reach found it). Diagnostics are taken again the way the baseline was:
- "push": the editor's pushed diagnostics (the board), of the version written (an edited file;
  waited for up to verifyWaitS) or newer than the baseline's push (another file; PUSH_WAIT_S);
- "pull": pulled (textDocument/diagnostic) from the editor's or the headless language servers,
  which answer for the text they have been sent (headless servers without pull diagnostics
  answer with their push for that version, language/headless.py);
- "own": where no language server answers, agentls' syntax checks of the current text, and for
  a file using a changed Python definition, agentls' own check of those uses (pycalls.py).
A file nothing covers is not compared."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentls.verify.before_after import Before
from agentls.verify.board import DiagnosticsBoard
from agentls.verify.checks import has_own_checks
from agentls.verify.diagnostics import diag_key
from agentls.verify.edit import checked
from agentls.verify.reach import (
    BEFORE_TIMEOUT_S,
    PUSH_WAIT_S,
    Following,
    Watched,
    pull,
    within,
)
from agentls.workspace.protocol import EditOutcome, FileChange, Languages

Diagnostics = list[dict[str, Any]]
Level = Literal["errors", "warnings"]
ReadText = Callable[[Path], Awaitable[str]]


def introduced(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], level: Level
) -> Diagnostics:
    """The diagnostics of `after` that `before` did not have, errors only (level "errors") or
    errors and warnings ("warnings"). Compared by severity, source and message, not by line (an
    edit moves lines), and counted: a second "x is not defined" where there was one is new."""
    worst = 1 if level == "errors" else 2
    seen = Counter(diag_key(d) for d in before)
    out: Diagnostics = []
    for d in after:
        if int(d.get("severity") or 1) > worst:
            continue
        key = diag_key(d)
        if seen[key] > 0:
            seen[key] -= 1
        else:
            out.append(d)
    return out


@dataclass
class Baseline:
    """One file of the turn: its diagnostics before, how they are to be taken again, and whether
    the turn wrote it (`version`: the editor's document version of its last write)."""

    path: Path
    how: set[str]
    before: Diagnostics
    seq: int = 0
    edited: bool = False
    version: int | None = None
    # A file using a changed Python definition, checked by agentls itself: the reach that found it.
    following: Following | None = None
    watched: Watched | None = None

    @property
    def uri(self) -> str:
        return self.path.as_uri()


@dataclass
class Checked:
    """A file's diagnostics before the turn and now (None: they could not be taken)."""

    path: Path
    edited: bool
    before: Diagnostics
    after: Diagnostics | None


@dataclass
class TurnEdits:
    """The files one session's running turn changed, or that use what it changed."""

    files: dict[Path, Baseline] = field(default_factory=dict)

    def start(self) -> None:
        """A new turn: nothing changed yet."""
        self.files.clear()

    def __bool__(self) -> bool:
        return any(b.edited for b in self.files.values())

    def edited(self, path: Path, before: Before, version: int | None) -> None:
        """An applied write of `path`, `before` its problems as the pipeline took them."""
        known = self.files.get(path)
        if known is None:
            known = self.files[path] = _baseline(path, before)
        known.edited = True
        known.version = version

    def deleted(self, path: Path) -> None:
        self.files.pop(path, None)

    def wrote(
        self, path: Path, before: Before, version: int | None, reach: Following | None
    ) -> None:
        """An applied edit of one file and, when it was followed, its reach."""
        self.edited(path, before, version)
        if reach is not None:
            self.followed(reach)

    def wrote_all(
        self,
        changes: Sequence[FileChange],
        befores: Sequence[Before | None],
        outcomes: Sequence[EditOutcome],
    ) -> None:
        """An applied change of several files (a file deleted: before None)."""
        for change, before, outcome in zip(changes, befores, outcomes, strict=True):
            if before is None:
                self.deleted(change.path)
            else:
                self.edited(change.path, before, outcome.version)

    def followed(self, reach: Following) -> None:
        """The files an edit's reach compared: their diagnostics before that edit."""
        for watched in reach.files:
            if watched.path in self.files:
                continue
            # A language server's pulled diagnostics, where they answered, say what agentls'
            # own check of the uses would (twice over).
            how = {"pull"} if "pull" in watched.how else set(watched.how)
            own = "own" in how
            self.files[watched.path] = Baseline(
                watched.path,
                how,
                list(watched.before),
                watched.seq,
                following=reach if own else None,
                watched=watched if own else None,
            )


def _baseline(path: Path, before: Before) -> Baseline:
    if before.by_push and not before.unheard:
        return Baseline(path, {"push"}, list(before.pushed), before.seq)
    how: set[str] = set()
    diagnostics: Diagnostics = []
    if before.served is not None and not before.by_push:
        return Baseline(path, {"pull"}, list(before.served))
    if has_own_checks(path):
        how.add("own")
        diagnostics += before.own
    return Baseline(path, how, diagnostics)


@dataclass
class Recheck:
    """What taking a turn's diagnostics again uses: the session's texts, the language servers,
    the board of the editor's pushes (None: it pushes none), how long an edited file's push may
    take (verifyWaitS)."""

    read: ReadText
    languages: Languages
    board: DiagnosticsBoard | None
    wait_s: float
    # How long one file's diagnostics may take (a language server's answer: languageTimeoutS).
    timeout_s: float = BEFORE_TIMEOUT_S

    async def run(self, edits: TurnEdits) -> list[Checked]:
        """Every covered file's diagnostics now, all at once, each within `timeout_s`."""
        files = [b for b in edits.files.values() if b.how]
        if not files:
            return []
        after = await asyncio.gather(*(within(self._after(b), self.timeout_s) for b in files))
        return [Checked(b.path, b.edited, b.before, a) for b, a in zip(files, after, strict=True)]

    async def _after(self, baseline: Baseline) -> Diagnostics | None:
        if "push" in baseline.how:
            return await self._pushed(baseline)
        out: Diagnostics = []
        if "pull" in baseline.how:
            pulled = await pull(self.languages, baseline.path, baseline.uri)
            if pulled is None:
                return None
            out += pulled
        if "own" in baseline.how:
            try:
                text = await self.read(baseline.path)
            except (OSError, UnicodeDecodeError):
                return None
            out += await checked(baseline.path, text)
            reach, watched = baseline.following, baseline.watched
            if reach is not None and watched is not None:
                try:
                    module = await self.read(reach.path)
                except (OSError, UnicodeDecodeError):
                    module = None
                if module is not None:
                    out += await reach._own(watched, module) or []
        return out

    async def _pushed(self, baseline: Baseline) -> Diagnostics | None:
        board = self.board
        if board is None:
            return None
        current = board.current(baseline.uri)
        if baseline.edited:
            version = baseline.version
            if current is not None and _answers(current.version, version, current.seq, baseline):
                return current.diagnostics
            seq = current.seq if current is not None else baseline.seq
            pushed = await board.wait_settled(baseline.uri, seq, version, self.wait_s)
            return pushed.diagnostics if pushed is not None else None
        if current is not None and current.seq > baseline.seq:
            return current.diagnostics
        # No push since: the editor pushes nothing for a file whose diagnostics did not change.
        pushed = await board.wait_settled(baseline.uri, baseline.seq, None, PUSH_WAIT_S)
        if pushed is not None:
            return pushed.diagnostics
        return current.diagnostics if current is not None else baseline.before


def _answers(pushed: int | None, written: int | None, seq: int, baseline: Baseline) -> bool:
    """Whether a push answers the version the turn last wrote (without versions: any push since
    the baseline)."""
    if pushed is not None and written is not None:
        return pushed >= written
    return seq > baseline.seq
