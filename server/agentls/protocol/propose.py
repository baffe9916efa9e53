"""Wire models of agent/proposeEdit: the user's own change (a code block's Apply in the panel),
proposed and reviewed like an edit of the agent's."""

from __future__ import annotations

from typing import Literal

from agentls.protocol.base import Params, Result


class ProposeEditParams(Params):
    """`agent/proposeEdit`: propose `text` as the whole new content of `path` (relative to the
    workspace root; a new file if it does not exist). The server asks about it as it asks about
    the agent's `write` of that file, in session `sessionId`: a permission-request event with the
    diff and the edit (reviewed in the editor, accepted in part or edited like any proposal),
    then a permission-resolved event. It answers once the user has decided; an accepted change is
    applied through workspace/applyEdit. A path outside the workspace or a protected one (.git,
    .agentls, ...) is an Invalid params error naming `path`."""

    session_id: str
    path: str
    text: str


# The user's answer ("unchanged": the file already has this text; nothing was asked).
ProposeDecision = Literal[
    "once", "always", "reject", "timeout", "cancelled", "unattended", "unchanged"
]


class ProposeEditResult(Result):
    decision: ProposeDecision
    # The change (or the part of it the user accepted) was written to the file.
    applied: bool
