"""agent/proposeEdit: a change the user proposes from the panel (a code block's Apply), handed to
the Agent (session/proposals.py asks about it as about the agent's edits and applies it)."""

from __future__ import annotations

from typing import Any

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import invalid, known_session, parse
from agentls.protocol.propose import ProposeEditParams, ProposeEditResult
from agentls.session import ProposalRefused
from agentls.session import propose_edit as propose


async def propose_edit(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(ProposeEditParams, raw)
    agent = await ls.agent()
    try:
        proposal = await known_session(
            params.session_id, lambda sid: propose(agent, sid, params.path, params.text)
        )
    except ProposalRefused as exc:
        raise invalid(f"Invalid params: path: {exc}") from None
    return ProposeEditResult(decision=proposal.decision, applied=proposal.applied).wire()
