"""A change the user proposes from the editor (agent/proposeEdit: a code block's Apply), asked
about through the same path as the agent's edits (Agent.ask: the permission-request event, the
editor's diff review, agent/approve) and applied through the Agent's workspace once accepted (the
one edit pipeline: conflict check, verification). A path outside the workspace, a protected one
(permission/protected.py) or a directory is refused before anything is asked."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.events import ToolResultEvent
from agentls.permission.protected import is_protected_path
from agentls.protocol.propose import ProposeDecision
from agentls.session.questions import AskContext
from agentls.tools.base import PermissionQuery
from agentls.tools.support.text import unified_diff
from agentls.workspace.folders import Folders, folders_of

if TYPE_CHECKING:
    from agentls.session.agent import Agent


class ProposalRefused(ValueError):
    """A proposal about a path it may not change; the message says why (for the `path` field)."""


@dataclass(frozen=True)
class Proposal:
    """How a proposal ended: the user's decision ("unchanged" when the file already holds the
    text; nothing was asked), and whether the file was written."""

    decision: ProposeDecision
    applied: bool


def proposed_path(root: Path | Folders, raw: str) -> Path:
    """The file in the workspace `raw` names (in any of its folders: workspace/folders.py);
    ProposalRefused when it is none, or protected, or a directory."""
    folders = root if isinstance(root, Folders) else Folders.single(root)
    if not raw.strip() or "\0" in raw:
        raise ProposalRefused("give a file path inside the workspace")
    path = Path(raw) if Path(raw).is_absolute() else folders.join(raw)
    resolved = path.resolve()
    folder = folders.folder_of(resolved)
    if folder is None or resolved == folder.root:
        raise ProposalRefused(f"{raw} is not inside the workspace")
    rel = folders.relative(resolved)
    if is_protected_path(resolved.relative_to(folder.root).as_posix(), folder.root):
        raise ProposalRefused(f"{rel} is protected; agentls does not change it")
    if resolved.is_dir():
        raise ProposalRefused(f"{rel} is a directory")
    return resolved


async def propose_edit(agent: Agent, session_id: str, raw_path: str, text: str) -> Proposal:
    """Ask the user about writing `text` to the file, and write it (or the part they accepted)
    once allowed. KeyError for an unknown session; ProposalRefused for a path it may not change
    or a file that is not text."""
    await agent.session(session_id)  # KeyError if unknown
    folders = folders_of(agent.workspace)
    path = proposed_path(folders, raw_path)
    rel = folders.relative(path)
    workspace = agent.workspace.for_session(session_id)  # the one edit pipeline, for the session
    try:
        old: str | None = await workspace.read_text(path)
    except FileNotFoundError:
        old = None
    except UnicodeDecodeError:
        raise ProposalRefused(f"{rel} is not a text file") from None
    if old == text:
        return Proposal(decision="unchanged", applied=False)
    verb = "Create" if old is None else "Apply to"
    query = PermissionQuery(
        tool="write",
        subject=rel,
        title=f"{verb} {rel}",
        input={"path": rel},
        diff=unified_diff(old, text, rel),
        path=path,
        old_text=old,
        new_text=text,
    )
    # The permission-request shows it in the session's transcript as a call of its own, and the
    # tool-result at the end closes it (neither is stored or sent to the model; no turn runs).
    call_id = f"apply_{secrets.token_hex(6)}"
    applied, output = False, f"Not applied: {rel} was not changed."
    decision: ProposeDecision = "cancelled"
    try:
        answer = await agent.ask(AskContext(session_id, call_id, query))
        decision = answer.decision
        if decision in ("once", "always"):
            new = text if answer.accepted is None else answer.accepted.get(path, old)
            if new is not None and new != old:
                # Checked and verified as the agent's own edits are (Agent.workspace).
                outcome = await workspace.write_text(path, new, old)
                applied = outcome.applied
                output = f"Applied to {rel}." if applied else f"Not applied: {outcome.reason}"
        elif decision == "reject":
            output = f"Rejected: {rel} was not changed."
    finally:
        agent.emit(
            ToolResultEvent(
                session_id=session_id,
                call_id=call_id,
                tool="write",
                output=output,
                is_error=not applied,
                status="completed" if applied else "error",
            )
        )
    return Proposal(decision=decision, applied=applied)
