"""Wire models of review and checkpoints (issue "Review like a code review"): rewinding to a user
message and redoing it (agent/revert's parts, agent/unrevert), and review "after" (edits applied
at once and kept or undone later: agent/listReview, agent/review). agent/approve's `edit` (a
partial or edited accept) is in models.py with ApproveParams."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentls.events import ReviewFile as ReviewFile
from agentls.protocol.base import Params, Result

RevertScope = Literal["code", "conversation", "both"]


class RevertConflict(Result):
    """A file the user changed after the agent's edit: never overwritten. Its three versions
    (None: the file did not exist then), for a merge editor."""

    path: str
    before: str | None  # before the agent's first change in the range
    agent: str | None  # the agent's last version
    current: str | None  # as it is now


class UnrevertParams(Params):
    """`agent/unrevert`: redo the session's last revert (its code and conversation parts), while
    no prompt has been sent since."""

    session_id: str


class UnrevertResult(Result):
    files: list[str]
    conflicts: list[RevertConflict] = Field(default_factory=list)
    # The messages that came back (ids, oldest first).
    message_ids: list[str] = Field(default_factory=list)


class ListReviewParams(Params):
    session_id: str


class ListReviewResult(Result):
    files: list[ReviewFile]


class ReviewParams(Params):
    """`agent/review`: keep or undo a file's pending change, all of it or some hunks (indexes
    from agent/listReview, or the review event). Undo goes through the editor as a workspace
    edit, merged into what the user changed since (their lines kept); lines the user changed that
    the undo changes too are a conflict, never overwritten."""

    session_id: str
    path: str
    action: Literal["keep", "undo"]
    hunks: list[int] | None = None  # None: the whole file


class ReviewResult(Result):
    # What is still pending review, after this answer.
    files: list[ReviewFile]
    conflict: RevertConflict | None = None
