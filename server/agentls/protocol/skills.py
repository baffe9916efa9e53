"""Wire models of agent/listSkills: the skills the agent can load (session/skills.py)."""

from __future__ import annotations

from typing import Literal

from agentls.protocol.base import Params, Result
from agentls.wire import WireModel


class ListSkillsParams(Params):
    """`agent/listSkills`: the skills the agent can load with its skill tool (and that a prompt
    "/NAME args" uses): folders with a SKILL.md in ~/.claude/skills, ~/.agents/skills,
    ~/.config/agentls/skills and, when the workspace is trusted, its .claude/skills,
    .agents/skills, .opencode/skills and .agentls/skills; a later one of a name wins."""


class SkillInfo(WireModel):
    name: str
    description: str
    path: str  # its SKILL.md
    source: Literal["user", "workspace"]
    # Claude Code rules the skill allows without asking for the rest of a turn that loads it.
    allowed_tools: list[str]


class ListSkillsResult(Result):
    skills: list[SkillInfo]
    # A line for each SKILL.md that could not be used (its file and why).
    problems: list[str]
    # The workspace has skills of its own that count only once it is trusted.
    untrusted_workspace_skills: bool
