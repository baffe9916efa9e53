"""Review of a finished background session in the editor: its branch's changes against its base,
file by file and hunk by hunk (workspace/hunks.py, as review "after" cuts them), and the hunks the
user keeps brought into the user's working tree as ONE edit through the workspace's edit pipeline
(Workspace.write_all: the editor's buffers, one undo, the conflict check and the merge of what
the user typed). Nothing is written but the hunks asked for; a hunk that does not apply cleanly to
the user's text now is a conflict and is not written, the others are. For such a file the
conflict's three texts come back (Brought.merges), for the editor's merge tools: the file at the
base, the user's text (with the file's clean hunks in), and the base with the clashing hunks; and
the user's text with them merged in between git's conflict markers.

The user's files are the repository's (the worktree's paths are relative to it) and must be in
the editor's workspace; a protected path (.git, .agentls, ...) is never written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.events import ReviewHunk
from agentls.session import background as bg
from agentls.session.proposals import ProposalRefused, proposed_path
from agentls.session.review import review_hunks
from agentls.workspace import worktree as wt
from agentls.workspace.folders import folders_of
from agentls.workspace.hunks import Hunk, hunks
from agentls.workspace.hunks import apply as apply_hunks
from agentls.workspace.merge import marked, merge
from agentls.workspace.protocol import FileChange

if TYPE_CHECKING:
    from agentls.verify.workspace import VerifiedWorkspace


@dataclass(frozen=True)
class BranchFile:
    """One file the session changed: its text at the base (None: it created it) and in its
    worktree now (None: it deleted it); binary files have no texts and no hunks."""

    path: str
    base: str | None
    branch: str | None
    binary: bool = False

    def hunks(self) -> list[Hunk]:
        return [] if self.binary else hunks(self.base or "", self.branch or "")

    def wire_hunks(self) -> list[ReviewHunk]:
        return [] if self.binary else review_hunks(self.base or "", self.branch or "")


@dataclass(frozen=True)
class ConflictTexts:
    """A file whose kept hunks clash with the user's text: what a three-way merge tool needs.
    base: the file at the session's base; yours: the user's text (the buffer, the file's
    clean hunks brought in); theirs: base with the clashing hunks (only those: the others are
    in yours already); marked: yours with theirs merged in, conflicts between markers."""

    target: Path
    base: str
    yours: str
    theirs: str
    marked: str


@dataclass
class Brought:
    """What agent/backgroundApply did: per file, the hunks written and those not (with why),
    and for a file whose hunks clash with the user's text, its texts for a merge."""

    applied: dict[str, list[int]] = field(default_factory=dict)
    conflicts: list[tuple[str, list[int], str]] = field(default_factory=list)
    merges: dict[str, ConflictTexts] = field(default_factory=dict)


def _text_at(root: Path, base: str, path: str) -> str | None:
    try:
        return wt.git(root, "show", f"{base}:{path}")
    except wt.WorktreeError:
        return None


def _text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def branch_files(record: bg.BackgroundRecord) -> list[BranchFile]:
    """The session's changed files against its base (its worktree's files now, committed or
    not); BackgroundError when its worktree is gone."""
    tree = Path(record.worktree)
    if not tree.is_dir():
        raise bg.BackgroundError(f"its worktree {record.worktree} is gone")
    try:
        changed = wt.changed_files(tree, record.base)
        out = []
        for c in changed:
            if c.added is None:
                out.append(BranchFile(c.path, None, None, binary=True))
                continue
            try:
                out.append(
                    BranchFile(c.path, _text_at(tree, record.base, c.path), _text_of(tree / c.path))
                )
            except UnicodeDecodeError:
                out.append(BranchFile(c.path, None, None, binary=True))
        return out
    except wt.WorktreeError as exc:
        raise bg.BackgroundError(str(exc)) from None


def _fits(base: str, current: str, chosen: list[Hunk]) -> str | None:
    """current with the chosen hunks (made against base) merged in; None on a conflict."""
    return merge(base, current, apply_hunks(base, chosen)).text


async def bring_in(
    record: bg.BackgroundRecord,
    keep: dict[str, list[int] | None],
    workspace: VerifiedWorkspace,
) -> Brought:
    """Apply the kept hunks (None: all of the file's) of a finished session to the user's files
    as one edit. ValueError naming the path for a file the session did not change or a hunk it
    has not; BackgroundError while it runs."""
    if bg.state_of(record)[0] in ("running", "waiting"):
        raise bg.BackgroundError(f"{record.session_id} is still running: review it once it is done")
    files = {f.path: f for f in branch_files(record)}
    for path, wanted in keep.items():
        if path not in files:
            raise ValueError(f"{path}: not changed by the session")
        count = len(files[path].hunks())
        bad = [n for n in wanted or [] if not 0 <= n < count]
        if bad:
            raise ValueError(f"{path}: no hunk {bad[0]} (it has {count}, numbered from 0)")
    folders = folders_of(workspace)
    repo = Path(record.repo_root)
    brought = Brought()
    changes: list[tuple[str, list[int], FileChange]] = []
    clashes: dict[str, tuple[Path, str, str, str]] = {}  # path: target, base, current, theirs
    for path, wanted in keep.items():
        file = files[path]
        all_hunks = file.hunks()
        numbers = sorted(set(range(len(all_hunks)) if wanted is None else wanted))
        if file.binary:  # no hunks: asked for, it is reported
            why = "a binary file: bring it in with `agentls background apply`"
            brought.conflicts.append((path, numbers, why))
            continue
        if not numbers:
            continue
        try:
            target = proposed_path(folders, str(repo / path))
        except ProposalRefused as exc:
            brought.conflicts.append((path, numbers, str(exc)))
            continue
        try:
            current = await workspace.read_text(target)
        except FileNotFoundError:
            current = None
        except (UnicodeDecodeError, IsADirectoryError):
            brought.conflicts.append((path, numbers, "not a text file in your tree"))
            continue
        whole = set(numbers) == set(range(len(all_hunks)))
        if file.base is None or current is None:
            # A file the session created, or one missing from the user's tree: only whole.
            if file.base is None and current is None and file.branch is not None:
                changes.append((path, numbers, FileChange(target, file.branch, None)))
            elif file.base is not None and current is None:
                brought.conflicts.append((path, numbers, "you deleted it"))
            elif current == file.branch:
                brought.conflicts.append((path, numbers, "your file has these changes already"))
            else:
                brought.conflicts.append((path, numbers, "your tree has another file there"))
            continue
        if file.branch is None and whole:
            if current == file.base:
                changes.append((path, numbers, FileChange(target, "", current, delete=True)))
            else:
                brought.conflicts.append((path, numbers, "you changed the file it deleted"))
            continue
        fitting = [n for n in numbers if _fits(file.base, current, [all_hunks[n]]) is not None]
        clash = [n for n in numbers if n not in fitting]
        merged = _fits(file.base, current, [all_hunks[n] for n in fitting]) if fitting else None
        if merged is None and fitting:
            clash, fitting = numbers, []
        if clash:
            brought.conflicts.append((path, clash, "your text there differs from its base"))
            theirs = apply_hunks(file.base, [all_hunks[n] for n in clash])
            clashes[path] = (target, file.base, merged or current, theirs)
        if fitting and merged == current:
            brought.applied[path] = fitting  # the user's file has them already
        elif fitting and merged is not None:
            changes.append((path, fitting, FileChange(target, merged, current)))
    if changes:
        outcomes = await workspace.write_all([c for _, _, c in changes])
        for (path, numbers, _), outcome in zip(changes, outcomes, strict=True):
            if outcome.applied:
                brought.applied[path] = numbers
            else:
                brought.conflicts.append((path, numbers, outcome.reason or "not applied"))
                clashes.pop(path, None)  # its text is not what the merge was made on
    for path, (target, base, yours, theirs) in clashes.items():
        text = marked(base, yours, theirs, "yours", record.branch)
        brought.merges[path] = ConflictTexts(target, base, yours, theirs, text)
    return brought


def remove(record: bg.BackgroundRecord, force: bool) -> None:
    """The worktree, its branch and the record deleted (session/background.remove)."""
    bg.remove(record, force)
