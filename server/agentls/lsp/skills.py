"""agent/listSkills: the skills the agent can load (the panel's skills list)."""

from __future__ import annotations

from typing import Any

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import parse
from agentls.protocol.skills import ListSkillsParams, ListSkillsResult, SkillInfo
from agentls.session.skills import available_skills, has_workspace_skills


async def list_skills(ls: AgentServer, raw: Any) -> dict[str, Any]:
    parse(ListSkillsParams, raw)
    agent = await ls.agent()
    trusted = agent.settings.workspace_trusted
    skills, problems = available_skills(agent.root, trusted)
    listed = [
        SkillInfo(
            name=s.name,
            description=s.description,
            path=str(s.file),
            source=s.source,
            allowed_tools=list(s.allowed_tools),
        )
        for s in skills.values()
    ]
    return ListSkillsResult(
        skills=listed,
        problems=problems,
        untrusted_workspace_skills=not trusted and has_workspace_skills(agent.root),
    ).wire()
