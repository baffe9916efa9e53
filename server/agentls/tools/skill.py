"""skill: load one of the user's skills (session/skills.py) by name: its instructions, where its
files are, and what its allowed-tools allow for the rest of the turn. Offered only when there is a
skill to load; the system prompt lists their names and descriptions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import Field

from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult, expect_input


class SkillInput(ToolInput):
    name: str = Field(
        min_length=1, max_length=64, description="The skill's name, as the list of skills gives it."
    )


class SkillTool(Tool):
    name = "skill"
    description = (
        "Load a skill (a procedure the user installed; the system prompt lists them) by name: "
        "you get its instructions and the paths of its files. Load it when a task matches its "
        "description, before you start, and follow it."
    )
    input_model = SkillInput

    def title(self, raw: dict[str, object]) -> str:
        name = raw.get("name")
        return f"Skill {name}" if isinstance(name, str) else "Skill"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, SkillInput)
        load: Callable[[str], Awaitable[str]] | None = getattr(ctx, "load_skill", None)
        if load is None:
            raise ToolError("Skills cannot be loaded here.")
        return ToolResult(await load(params.name.strip()), title=f"Skill {params.name.strip()}")
