"""todowrite: the session's todo list, replaced whole at each call; stored with the session and
shown by the front ends (a `todo` event). The context keeps it (session/calls.py set_todos)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import Field

from agentls.events import TodoItem, TodoStatus
from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult, expect_input

MAX_TODOS = 100
MARKS: dict[str, str] = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


class TodoInput(ToolInput):
    content: str = Field(min_length=1, max_length=500, description="What to do, in one line.")
    status: TodoStatus = Field(description="pending, in_progress (one at a time) or completed.")
    priority: Literal["high", "medium", "low"] | None = Field(default=None)


class TodoWriteInput(ToolInput):
    todos: list[TodoInput] = Field(
        max_length=MAX_TODOS, description="The whole list, in order; it replaces the previous one."
    )


def render_todos(todos: list[TodoItem]) -> str:
    """The list as the model and the terminal read it: one `[x] content` line an item."""
    lines = []
    for todo in todos:
        priority = f" ({todo.priority})" if todo.priority else ""
        lines.append(f"{MARKS[todo.status]} {todo.content}{priority}")
    return "\n".join(lines)


class TodoWriteTool(Tool):
    name = "todowrite"
    description = (
        "Keep a todo list for multi-step work the user can follow: call it with the whole list "
        "(it replaces the previous one) when you plan the steps, when you start one (mark it "
        "in_progress; one at a time) and as soon as you finish one (completed). Skip it for a "
        "single, simple step."
    )
    input_model = TodoWriteInput

    def title(self, raw: dict[str, object]) -> str:
        todos = raw.get("todos")
        if not isinstance(todos, list):
            return "Todo list"
        done = sum(1 for t in todos if isinstance(t, dict) and t.get("status") == "completed")
        return f"Todo list ({done}/{len(todos)} done)"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, TodoWriteInput)
        set_todos: Callable[[list[TodoItem]], Awaitable[None]] | None = getattr(
            ctx, "set_todos", None
        )
        if set_todos is None:
            raise ToolError("There is no session here to keep a todo list in.")
        todos = [TodoItem.model_validate(t.model_dump()) for t in params.todos]
        await set_todos(todos)
        done = sum(1 for t in todos if t.status == "completed")
        if not todos:
            return ToolResult("The todo list is now empty.", title="Todo list cleared")
        return ToolResult(
            f"Todo list updated ({done} of {len(todos)} completed):\n{render_todos(todos)}",
            title=f"Todo list ({done}/{len(todos)} done)",
        )
