"""Session modes: `build` (the default) and `plan`, in which nothing may change.

In plan mode a call is refused at the tool level, before any permission question: every tool
that is not read-only (edit, write, rename, an MCP server's tools, ...) and every bash line that
is not read-only (permission/bash_readonly.py; a line it cannot judge is not). Read-only tools,
the todo list and exit_plan run as usual. The model is told it is planning in the system prompt
(system_prompt.py PLAN_PROMPT) and in each refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from agentls.events import ModeEvent, SessionMode, TodoEvent, TodoItem
from agentls.permission.bash_readonly import is_read_only
from agentls.session.questions import AskContext, Asker
from agentls.session.state import SessionState
from agentls.store import Store
from agentls.tools.base import PermissionQuery, Tool

EventSink = Callable[[Any], None]

MODES: tuple[SessionMode, ...] = ("build", "plan")
# Tools that change no file, run in plan mode though not read-only (they keep session state).
PLAN_TOOLS = frozenset({"todowrite", "exit_plan", "ask_user"})
# How exit_plan's question ended (tools/exit_plan.py words each for the model).
PlanOutcome = Literal["approved", "rejected", "timeout", "unattended"]


def plan_refusal(tool: Tool, params: Any) -> str | None:
    """Why plan mode refuses this call; None when it may run."""
    if tool.read_only or tool.name in PLAN_TOOLS:
        return None
    if tool.name == "bash":
        command = getattr(params, "command", "")
        if isinstance(command, str) and is_read_only(command):
            return None
        what = "this bash command is not read-only (or cannot be judged so)"
    else:
        what = f"{tool.name} can change files or state"
    return (
        f"Refused: you are in plan mode, and {what}. Nothing was run. In plan mode you only "
        "read and investigate (read, glob, grep, list, the language tools, read-only bash such "
        "as `ls`, `cat`, `git log`). When the plan is ready, call exit_plan with it; the user "
        "approves it (then you may change files) or asks you to keep planning."
    )


async def set_mode(state: SessionState, store: Store, emit: EventSink, mode: SessionMode) -> None:
    """Switch the session's mode (stored; a `mode` event when it changes)."""
    if state.record.mode == mode:
        return
    await store.set_mode(state.record.id, mode)
    state.record.mode = mode
    emit(ModeEvent(session_id=state.record.id, mode=mode))


async def set_todos(
    state: SessionState, store: Store, emit: EventSink, todos: list[TodoItem]
) -> None:
    """Replace the session's todo list (stored; a `todo` event)."""
    await store.save_todos(state.record.id, todos)
    state.todos = list(todos)
    emit(TodoEvent(session_id=state.record.id, todos=list(todos)))


async def approve_plan(
    state: SessionState, store: Store, emit: EventSink, ask: Asker, call_id: str, plan: str
) -> tuple[PlanOutcome, str | None] | None:
    """exit_plan: the plan shown to the user as a question (the one ask path; no rule answers
    it). Approved: build mode, ("approved", None). Not: how it ended and the user's feedback.
    None: not planning."""
    if state.record.mode != "plan":
        return None
    query = PermissionQuery(
        tool="exit_plan",
        subject="plan",
        title="Approve the plan and start building",
        input={"plan": plan},
    )
    answer = await ask(AskContext(state.record.id, call_id, query))
    if answer.decision in ("once", "always"):
        await set_mode(state, store, emit, "build")
        return "approved", None
    if answer.decision in ("timeout", "unattended"):
        return answer.decision, None
    return "rejected", (answer.feedback or "").strip() or None
