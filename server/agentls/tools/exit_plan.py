"""exit_plan: in plan mode, hand the plan to the user, who approves it (the session switches to
build mode and the turn goes on) or asks for more planning with feedback. Asked through the one
question path (session/modes.py approve_plan, via the context's exit_plan)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import Field

from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult, expect_input

# How the question ended (session/modes.py PlanOutcome: approved, rejected, timeout,
# unattended), and the user's feedback when they rejected it.
PlanAnswer = tuple[str, str | None]


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
        outcome, feedback = answer
        if outcome == "approved":
            return ToolResult(
                "The user approved the plan. You are now in build mode: carry it out, step by "
                "step (keep the todo list up to date).",
                title="Plan approved",
            )
        if outcome == "unattended":
            # Only the end of the turn is asked of the model here: no "revise and call again".
            return ToolResult(
                "The plan was shown to the user, but they are not at a terminal to approve it; "
                "you are still in plan mode. Do not call exit_plan again: end the turn now with "
                "a short summary of the plan as your final message.",
                is_error=True,
                title="Plan shown, not approved",
            )
        if outcome == "timeout":
            return ToolResult(
                "No answer came before the question timed out; you are still in plan mode. Do "
                "not call exit_plan again now: end the turn with the plan in your final message.",
                is_error=True,
                title="Plan not approved",
            )
        said = f"\nTheir feedback: {feedback}" if feedback else ""
        return ToolResult(
            "The user did not approve the plan; you are still in plan mode. Do not present the "
            "same plan again: revise it to their feedback (or ask them what to change), then call "
            f"exit_plan with the revised plan.{said}",
            is_error=True,
            title="Plan not approved",
        )
