"""Wire models of the panel's review of a finished background session (session/background_review.py):
agent/backgroundDiff lists its branch's changes against its base, agent/backgroundApply brings the
hunks the user keeps into their working tree as one edit, agent/backgroundRemove deletes its
worktree and branch."""

from __future__ import annotations

from typing import Literal

from agentls.events import ReviewHunk
from agentls.protocol.base import Params, Result
from agentls.wire import WireModel


class BackgroundDiffParams(Params):
    """`agent/backgroundDiff`: the changes of background session `sessionId` (one of the
    workspace's repository) against the commit its worktree was made from, its worktree's files
    as they are now (committed or not). Nothing is changed."""

    session_id: str


class BackgroundFile(WireModel):
    """One file the session changed, relative to the repository. `base`: its text at the base
    (null: the session created it); `branch`: in the worktree now (null: deleted). A binary file
    has neither and no hunks (bring it in with `agentls background apply`)."""

    path: str
    base: str | None
    branch: str | None
    binary: bool = False
    hunks: list[ReviewHunk]


class BackgroundDiffResult(Result):
    # "running", "waiting", "done" or "failed" (BackgroundInfo.state): only a session not
    # running can be brought in.
    state: Literal["running", "waiting", "done", "failed"]
    branch: str
    base: str
    files: list[BackgroundFile]


class KeepFile(Params):
    path: str
    # The hunks kept (their index in agent/backgroundDiff's list); null: all of them.
    hunks: list[int] | None = None


class BackgroundApplyParams(Params):
    """`agent/backgroundApply`: bring exactly the kept hunks of these files into the user's
    working tree, as one edit through workspace/applyEdit (the editor's buffers, one undo; what
    the user typed elsewhere in a file is kept). A hunk that does not apply cleanly to the file's
    text now is a conflict and is not written (its `merge` gives the texts to resolve it in a
    merge editor); the others are. A path the session did not change
    or a hunk it has not is an Invalid params error naming `keep`; a running session one naming
    `sessionId`."""

    session_id: str
    keep: list[KeepFile]


class AppliedFile(WireModel):
    path: str
    hunks: list[int]


class ConflictMerge(WireModel):
    """A conflicted file's texts for a three-way merge (VS Code's merge editor): `uri` the
    user's file (the merge's output), `base` its text at the session's base, `yours` the user's
    text when the hunks were brought in (the buffer, the file's clean hunks in), `theirs` the
    base with the clashing hunks, `marked` yours with them merged in between git's conflict
    markers (<<<<<<< yours / ======= / >>>>>>> the branch). Nothing of it is written."""

    uri: str
    base: str
    yours: str
    theirs: str
    marked: str


class ConflictFile(WireModel):
    path: str
    hunks: list[int]
    reason: str
    # Hunks that clash with the user's text: the file's texts for a merge (absent otherwise:
    # a binary file, a protected path, a file deleted on one side).
    merge: ConflictMerge | None = None


class BackgroundApplyResult(Result):
    applied: list[AppliedFile]
    conflicts: list[ConflictFile]


class BackgroundRemoveParams(Params):
    """`agent/backgroundRemove`: delete the session's worktree (its files, uncommitted changes
    included) and its branch. Refused (Invalid params naming `force`) while its branch or worktree
    holds work not merged into the repository's HEAD, unless force (hunks brought in with
    agent/backgroundApply are not a merge: remove with force once they are in)."""

    session_id: str
    force: bool = False


class BackgroundRemoveResult(Result):
    removed: bool
