"""task: a sub-agent. It works on its own in a child session (session/subagents.py), with the
read-only tools unless its agent type says otherwise, and answers with its final text and a line
on what it did. The context runs it (session/calls.py CallContext.run_task)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from pydantic import Field

from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult, expect_input


class AgentTypeInfo(Protocol):
    """What the tool says of an agent type (config.AgentType)."""

    @property
    def description(self) -> str: ...


class TaskInput(ToolInput):
    description: str = Field(
        min_length=1, max_length=100, description="A short (3-5 words) name of the task."
    )
    prompt: str = Field(
        min_length=1,
        max_length=50_000,
        description="Everything the sub-agent needs to know: it sees none of this conversation.",
    )
    agent: str | None = Field(
        default=None,
        max_length=100,
        description="The agent type (from the `agents` setting); default: general (read-only).",
    )


class TaskTool(Tool):
    name = "task"
    description = (
        "Start a sub-agent that works on its own and answers with a report: for a search or an "
        "investigation across many files that would fill this conversation. It sees none of this "
        "conversation: say in the prompt exactly what to find and what to report. By default it "
        "has the read-only tools (read, glob, grep, list, webfetch, and the language tools where a "
        "language server answers them). Several "
        "task calls in one message run at the same time. Its answer is for you; tell the user "
        "what matters of it."
    )
    input_model = TaskInput
    # Runs beside its neighbours in one message (calls.py); what it may change is its tools'.
    read_only = True

    def __init__(self, agents: Callable[[], Mapping[str, AgentTypeInfo]] | None = None) -> None:
        # The agent types by name (session/subagents.py agent_types), said in the schema.
        self.agents = agents

    def schema(self) -> dict[str, Any]:
        schema = super().schema()
        types = self.agents() if self.agents is not None else {}
        if types:
            listed = "; ".join(
                f"{name}: {kind.description.strip().rstrip('.')}" if kind.description else name
                for name, kind in sorted(types.items())
            )
            schema["description"] += f" The agent types: {listed}."
        return schema

    def title(self, raw: dict[str, Any]) -> str:
        description = raw.get("description")
        return f"task: {description}" if isinstance(description, str) else "task"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, TaskInput)
        run_task: Callable[[str, str, str | None], Awaitable[ToolResult]] | None = getattr(
            ctx, "run_task", None
        )
        if run_task is None:
            raise ToolError("There is no session here to run a sub-agent in.")
        return await run_task(params.description, params.prompt, params.agent)
