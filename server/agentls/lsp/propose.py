"""agent/proposeEdit: a change the user proposes from the panel (a code block's Apply), asked
about through the same path as the agent's edits (Agent.ask: the permission-request event, the
editor's diff review, agent/approve) and applied through the workspace once accepted."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from agentls.events import ToolResultEvent
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import invalid, known_session, parse
from agentls.permission.protected import is_protected_path
from agentls.protocol.propose import ProposeDecision, ProposeEditParams, ProposeEditResult
from agentls.session.questions import AskContext
from agentls.tools.base import PermissionQuery
from agentls.tools.support.text import unified_diff


def _inside(root: Path, raw: str) -> Path:
    """The path in the workspace, or an Invalid params error naming `path`."""
    if not raw.strip() or "\0" in raw:
        raise invalid("Invalid params: path: give a file path inside the workspace")
    path = Path(raw) if Path(raw).is_absolute() else root / raw
    resolved = path.resolve()
    if root not in resolved.parents:
        raise invalid(f"Invalid params: path: {raw} is not inside the workspace")
    rel = resolved.relative_to(root).as_posix()
    if is_protected_path(rel, root):
        raise invalid(f"Invalid params: path: {rel} is protected; agentls does not change it")
    if resolved.is_dir():
        raise invalid(f"Invalid params: path: {rel} is a directory")
    return resolved


async def propose_edit(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(ProposeEditParams, raw)
    agent = await ls.agent()
    await known_session(params.session_id, agent.session)
    root = ls.root.resolve()
    path = _inside(root, params.path)
    rel = path.relative_to(root).as_posix()
    workspace = ls.ws
    assert workspace is not None  # set by ls.agent()
    try:
        old: str | None = await workspace.read_text(path)
    except FileNotFoundError:
        old = None
    except UnicodeDecodeError:
        raise invalid(f"Invalid params: path: {rel} is not a text file") from None
    if old == params.text:
        return ProposeEditResult(decision="unchanged", applied=False).wire()
    verb = "Create" if old is None else "Apply to"
    query = PermissionQuery(
        tool="write",
        subject=rel,
        title=f"{verb} {rel}",
        input={"path": rel},
        diff=unified_diff(old, params.text, rel),
        path=path,
        old_text=old,
        new_text=params.text,
    )
    # The permission-request shows it in the session's transcript as a call of its own, and the
    # tool-result at the end closes it (neither is stored or sent to the model; no turn runs).
    call_id = f"apply_{secrets.token_hex(6)}"
    applied, output = False, f"Not applied: {rel} was not changed."
    decision: ProposeDecision = "cancelled"
    try:
        answer = await agent.ask(AskContext(params.session_id, call_id, query))
        decision = answer.decision
        if decision in ("once", "always"):
            text = params.text if answer.accepted is None else answer.accepted.get(path, old)
            if text is not None and text != old:
                outcome = await workspace.write_text(path, text, old)
                applied = outcome.applied
                output = f"Applied to {rel}." if applied else f"Not applied: {outcome.reason}"
        elif decision == "reject":
            output = f"Rejected: {rel} was not changed."
    finally:
        agent.emit(
            ToolResultEvent(
                session_id=params.session_id,
                call_id=call_id,
                tool="write",
                output=output,
                is_error=not applied,
                status="completed" if applied else "error",
            )
        )
    return ProposeEditResult(decision=decision, applied=applied).wire()
