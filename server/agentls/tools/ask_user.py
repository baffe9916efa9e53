"""ask_user: a question to the user, with choices to pick from or an answer in their own words,
shown by every front end's question UI (the panel's card, the terminal, ACP's permission
request) through the one ask path (session/questions.py ask_user, via the context's ask_user).
Without anyone to ask (`agentls run` without a terminal) it is refused, and the model is told
to say what it needs and stop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from pydantic import Field

from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult, expect_input

# (how it ended: answered, declined, timeout or unattended; the answer or the user's note)
UserReply = tuple[str, str | None]
MAX_CHOICES = 8


class AskUserInput(ToolInput):
    question: str = Field(
        min_length=1,
        max_length=2_000,
        description="The question, short and complete: what you need to know and why.",
    )
    choices: list[Annotated[str, Field(max_length=300)]] | None = Field(
        default=None,
        max_length=MAX_CHOICES,
        description=f"Up to {MAX_CHOICES} short answers to pick from (the user may still write "
        "their own). Leave out for an open question.",
    )


def short(text: str, limit: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class AskUserTool(Tool):
    name = "ask_user"
    description = (
        "Ask the user a question and wait for the answer: when the task is ambiguous, a choice "
        "is theirs to make (an approach, a name, what to keep), or you need something only "
        "they know. Give choices when there are a few likely answers. Do not ask what you can "
        "find out with the other tools, or for permission (tool calls ask by themselves)."
    )
    input_model = AskUserInput

    def title(self, raw: dict[str, object]) -> str:
        question = raw.get("question")
        return f"Question: {short(question)}" if isinstance(question, str) else "Question"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, AskUserInput)
        ask: Callable[[str, list[str]], Awaitable[UserReply]] | None = getattr(
            ctx, "ask_user", None
        )
        if ask is None:
            raise ToolError("There is no user here to ask: go on with your best judgement.")
        choices = [c.strip() for c in params.choices or [] if c.strip()]
        outcome, said = await ask(params.question.strip(), choices)
        title = self.title({"question": params.question})
        if outcome == "answered":
            return ToolResult(f"The user answered: {said}", title=title)
        if outcome == "unattended":
            raise ToolError(said or "No one could be asked.")
        if outcome == "timeout":
            text = "No answer came before the question timed out."
        else:
            text = "The user chose not to answer."
            if said:
                text += f" Their note: {said}"
        return ToolResult(
            f"{text} Do not ask the same again: go on with your best judgement and say what you "
            "assumed, or end the turn with the question in your final message.",
            is_error=True,
            title=title,
        )
