"""exit_plan: in plan mode, hand the plan to the user, who approves it (the session switches to
build mode and the turn goes on) or asks for more planning with feedback. Asked through the one
question path (session/modes.py approve_plan, via the context's exit_plan)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import Field

from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult, expect_input

# (approved, the user's feedback when not)
PlanAnswer = tuple[bool, str | None]


class ExitPlanInput(ToolInput):
    plan: str = Field(
        min_length=1,
        max_length=50_000,
        description="The plan, in markdown: the steps, the files each changes, how to verify.",
    )


class ExitPlanTool(Tool):
    name = "exit_plan"
    description = (
        "Only in plan mode: present your finished plan to the user. If they approve it, plan mode "
        "ends and you carry the plan out (you may then change files); if not, you get their "
        "feedback and keep planning. Call it once the plan is complete, not for questions."
    )
    input_model = ExitPlanInput

    def title(self, raw: dict[str, object]) -> str:
        return "Plan ready for approval"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, ExitPlanInput)
        exit_plan: Callable[[str], Awaitable[PlanAnswer | None]] | None = getattr(
            ctx, "exit_plan", None
        )
        if exit_plan is None:
            raise ToolError("There is no session here to leave plan mode in.")
        answer = await exit_plan(params.plan)
        if answer is None:
            raise ToolError(
                "You are not in plan mode: there is nothing to approve. Go on with the work."
            )
        approved, feedback = answer
        if approved:
            return ToolResult(
                "The user approved the plan. You are now in build mode: carry it out, step by "
                "step (keep the todo list up to date).",
                title="Plan approved",
            )
        said = f"\nTheir feedback: {feedback}" if feedback else ""
        return ToolResult(
            f"The user did not approve the plan; you are still in plan mode. Revise the plan and "
            f"call exit_plan again when it is ready.{said}",
            is_error=True,
            title="Plan not approved",
        )
