"""The task tool's description: the agent types it lists read as sentences."""

from __future__ import annotations

from agentls.config import AgentType
from agentls.session.subagents import agent_types
from agentls.tools.task import TaskTool


def test_the_agent_types_are_listed_without_a_double_period() -> None:
    types = agent_types({"reviewer": AgentType(description="Reviews code.")})
    description = TaskTool(lambda: types).schema()["description"]
    assert "general: Investigates with the read-only tools; reviewer: Reviews code." in description
    assert ".." not in description
