"""Sub-agents: the task tool's child sessions.

A task runs the same loop (turn.py Turn) in a session of its own, stored with its parent session
and agent type (store/session_meta.py), with the read-only tools unless its agent type (the
`agents` setting) names others, and never the task tool (depth 1). It shares the parent turn's
cancel (it runs inside the task call, so a cancel of the turn reaches it and its turn is finished
as any cancelled turn), its questions (the same ask path, labelled with the sub-agent) and its
cost (its usage is added to the parent turn's, and to the parent session's totals and their
sub-agents' share: store/usage.py). Its events carry the child session's id and the
task call they belong to (EventBase.parent_session_id, parent_call_id, agent). At most
`maxParallelTasks` run at once; several task calls of one message run together (the task tool
is read-only in the sense of calls.py: it may run beside its neighbours).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentls.config import AgentType, Settings
from agentls.history import ToolPart, Usage, clean_text
from agentls.session.agent_files import ALL_TOOLS, available_agents
from agentls.session.calls import CallEnv
from agentls.session.claude_formats import resolve_model
from agentls.session.policy import Policy
from agentls.session.questions import AskContext
from agentls.session.state import SessionState
from agentls.session.turn import Turn, TurnParts
from agentls.store import Store
from agentls.tools.base import ToolError, ToolResult
from agentls.tools.registry import ToolRegistry
from agentls.tools.task import TaskTool

# A sub-agent's tools when its agent type names none: those that change nothing.
READ_ONLY_TOOLS = (
    "read",
    "glob",
    "grep",
    "list",
    "webfetch",
    "symbols",
    "definition",
    "references",
    "hover",
    "callers",
    "outline",
    "type_definition",
    "implementation",
    "callees",
)
TASK_TOOL = "task"
# The main session's own tools, never a sub-agent's (it works alone, in the parent's mode).
SESSION_ONLY = frozenset({"ask_user", "exit_plan"})
# The agent type of a task that names none.
DEFAULT_AGENT = "general"


def agent_types(
    agents: dict[str, AgentType] | None, files: dict[str, AgentType] | None = None
) -> dict[str, AgentType]:
    """The agent types by name: `general` (read-only), those of the agent files (agent_files.py)
    and the configured ones, a later one of a name replacing an earlier."""
    types = {DEFAULT_AGENT: AgentType(description="Investigates with the read-only tools.")}
    types.update(files or {})
    types.update(agents or {})
    return types


def workspace_agent_types(
    settings: Settings, root: Path | str | None, others: Sequence[tuple[Path, bool]] = ()
) -> dict[str, AgentType]:
    """Every agent type of a workspace root (and its other folders, each with its trust:
    Policy.other_folders): agent_types with its agent files."""
    return agent_types(settings.agents, available_agents(settings, root, others).types)


def plain_title(description: str) -> str:
    """The model's task description as a session title: one line of printable characters (no
    terminal escape, line break or direction override reaches a session list)."""
    text = "".join(c if c.isprintable() else " " for c in clean_text(description))
    return " ".join(text.split()) or "Sub-agent"


def summary_of(state: SessionState, agent: str) -> str:
    """One line on what the sub-agent did: its tool calls by tool, and the files it read."""
    calls: Counter[str] = Counter()
    files: list[str] = []
    for message in state.messages:
        for part in message.parts:
            if not isinstance(part, ToolPart):
                continue
            calls[part.tool] += 1
            path = part.input.get("path")
            if part.tool == "read" and isinstance(path, str) and path not in files:
                files.append(path)
    total = sum(calls.values())
    used = ", ".join(f"{tool} x{n}" if n > 1 else tool for tool, n in calls.most_common())
    line = f"[sub-agent {agent}, session {state.record.id}: "
    line += f"{total} tool call{'s' if total != 1 else ''}" + (f" ({used})" if used else "")
    if files:
        shown = ", ".join(files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
        line += f"; read {shown}"
    return line + "]"


async def count_into_parent(store: Store, parent: SessionState, usage: Usage) -> None:
    """A sub-agent's usage counts into its parent session's totals (in memory and stored), and
    into their sub-agents' share."""
    if usage == Usage():
        return
    record = parent.record
    record.usage = record.usage.add(usage)
    record.subagent_usage = (record.subagent_usage or Usage()).add(usage)
    await store.add_subagent_usage(record.id, usage)


class SubAgents:
    """Runs task calls for an Agent: `parts_for(model)` gives the parent's turn parts for a
    model (Agent._turn_parts), of which a sub-agent keeps the store, the provider, the policy,
    the workspace and the instructions; `keep(state)` makes a child's state the Agent's; the
    registry's task tool is given the agent types of the policy's settings."""

    def __init__(
        self,
        parts_for: Callable[[str], TurnParts],
        keep: Callable[[SessionState], None],
        registry: ToolRegistry,
        policy: Policy,
    ) -> None:
        self.parts_for = parts_for
        # Puts the child's state among the Agent's sessions: read while it runs (getMessages, a
        # question's approve), it is this one, not a copy loaded from the store.
        self.keep = keep
        self._slots: asyncio.Semaphore | None = None
        self._size = 0
        # The task tool tells the model the agent types (as the tool list is built: a change
        # of the `agents` setting counts once the tool list is built again, at a restart).
        if isinstance(registry.get(TASK_TOOL), TaskTool):
            registry.register(
                TaskTool(
                    lambda: workspace_agent_types(
                        policy.settings, policy.root, policy.other_folders
                    )
                ),
                replace=True,
            )

    def slots(self, size: int) -> asyncio.Semaphore:
        """The running tasks' cap (maxParallelTasks; a new value counts for the tasks after)."""
        if self._slots is None or self._size != size:
            self._slots = asyncio.Semaphore(size)
            self._size = size
        return self._slots

    def registry_for(self, kind: AgentType, parent: ToolRegistry) -> ToolRegistry:
        names = kind.tools if kind.tools is not None else READ_ONLY_TOOLS
        if ALL_TOOLS in names:  # the session's tools (a Claude Code agent naming none)
            names = [n for n in parent.names() if n not in SESSION_ONLY]
        registry = ToolRegistry()
        for name in dict.fromkeys(names):
            tool = parent.get(name)
            if tool is not None and name != TASK_TOOL:
                registry.register(tool)
        return registry

    async def run(
        self,
        add_usage: Callable[[Usage], Usage],
        env: CallEnv,
        call_id: str,
        description: str,
        prompt: str,
        agent: str | None,
    ) -> ToolResult:
        """One task call: the sub-agent's turn to its end; its final text and a summary line."""
        settings = env.policy.settings
        name, kind = _agent_type(settings, env.policy.root, agent, env.policy.other_folders)
        model = resolve_model(kind.model, env.state.record.model)
        async with self.slots(settings.max_parallel_tasks):
            parts = self.parts_for(model)
            store = parts.store
            state = await self._child_state(store, env, description, model, name)
            turn = Turn(self._child_parts(parts, env, kind, name, call_id), state, model)
            text = f"{kind.prompt.strip()}\n\n{prompt}" if kind.prompt.strip() else prompt
            try:
                result = await turn.run(text, [])
            except asyncio.CancelledError:
                # The parent turn was cancelled: this turn ends as a cancelled one (stored,
                # its running calls marked), and the cancel goes on to the parent.
                await turn.finish_cancelled()
                raise
            finally:
                state.users -= 1
                add_usage(turn.usage)
                await count_into_parent(store, env.state, turn.usage)
        summary = summary_of(state, name)
        if result.error is not None:
            return ToolResult(
                f"The sub-agent failed: {result.error}\n\n{summary}",
                is_error=True,
                title=f"task: {description}",
            )
        text = result.text.strip() or "(The sub-agent ended without a final answer.)"
        if result.finish_reason not in ("end_turn", "max_tokens"):
            text += f"\n\n(It stopped: {result.finish_reason}.)"
        return ToolResult(f"{text}\n\n{summary}", title=f"task: {description}")

    async def _child_state(
        self, store: Store, env: CallEnv, description: str, model: str, name: str
    ) -> SessionState:
        """The sub-agent's child session, stored under the parent's, kept in memory while its
        turn runs."""
        parent = env.state.record
        record = await store.create_session(
            title=plain_title(description), cwd=parent.cwd, model=model
        )
        await store.set_parent(record.id, parent.id, name)
        record.parent_id, record.agent = parent.id, name
        record.mode = parent.mode  # plan mode holds for its sub-agents too (not stored)
        state = SessionState(record=record, messages=[])
        state.grants = env.state.grants  # what the user allowed "always" in this session
        state.users += 1  # kept in memory while it runs (see SessionState.idle)
        self.keep(state)
        return state

    def _child_parts(
        self, parts: TurnParts, env: CallEnv, kind: AgentType, name: str, call_id: str
    ) -> TurnParts:
        """The sub-agent's turn parts: the type's tools, the parent's workspace, and its events
        and questions marked as the parent call's."""
        origin: dict[str, Any] = {
            "parent_session_id": env.state.record.id,
            "parent_call_id": call_id,
            "agent": name,
        }

        def emit(event: Any) -> None:
            env.emit(event.model_copy(update=origin))

        async def ask(ctx: AskContext) -> Any:
            return await env.ask(dataclasses.replace(ctx, **origin))

        return dataclasses.replace(
            parts,
            registry=self.registry_for(kind, env.registry),
            workspace=env.workspace,  # its calls made for the parent's session (an editor's)
            emit=emit,
            ask=ask,
            prepare_tools=None,
            run_task=None,
            # Its own prompt (system_prompt.py): a report for the caller, its tools only.
            prompt=dataclasses.replace(
                parts.prompt, kind="subagent", agent=name, description=kind.description
            ),
        )


def _agent_type(
    settings: Settings, root: str, agent: str | None, others: Sequence[tuple[Path, bool]] = ()
) -> tuple[str, AgentType]:
    """The task's agent type by name (the default one when none is named)."""
    name = agent or DEFAULT_AGENT
    files = available_agents(settings, root, others)
    types = agent_types(settings.agents, files.types)
    kind = types.get(name)
    if kind is None:
        why = f" ({files.problems[name]})" if name in files.problems else ""
        raise ToolError(
            f"Unknown agent {name!r}{why}. The agents are: {', '.join(sorted(types))}. "
            "Nothing was run."
        )
    return name, kind
