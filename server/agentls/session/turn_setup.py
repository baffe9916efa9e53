"""A prompt's turn set up (Agent._run_turn): the session's turn lock taken, and the parts the turn
runs with: the session's own, or, for a custom command whose front matter names `agent: NAME`,
those of that agent type (the `agents` setting, session/subagents.py) for that turn only.

A command run as an agent type stays in the session (its history, mode, grants): it gets the
type's tools as a sub-agent would (SubAgents.registry_for: only those the session has, never
`task`), and its model (the command's own `model` wins). The type's instructions are put before
the command's text (session/commands.py expand), as a sub-agent's are before its task: stored
with the user message, so that what the model was told stays in the history the next turns,
a reload or a compaction see. Its system prompt is the main agent's written for the type's tools
(system_prompt.py, kind "command"): that costs the prompt cache nothing more, since the tools,
which come before the system prompt in the cached prefix, change with the type anyway.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from agentls.config import AgentType
from agentls.session.state import SessionState
from agentls.session.turn import Turn, TurnParts, uncancel
from agentls.store import Store
from agentls.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from agentls.session.commands import Expansion


class LockHost(Protocol):
    """What taking the turn lock uses of the Agent (agent.py)."""

    store: Store
    lock_owner: str

    async def _reload(self, state: SessionState) -> None: ...

    async def _unlock(self, session_id: str) -> None: ...


async def take_turn_lock(host: LockHost, state: SessionState) -> bool:
    """Take the session's turn lock in the store (one turn of a session at a time across
    processes: SessionLockedError when another process runs one), and read the session again
    when another process ran a turn of it or reverted it since it was loaded. False when
    cancelled meanwhile (the lock let go again)."""
    session_id = state.record.id
    locked = False
    try:
        last = await host.store.lock_session(session_id, host.lock_owner)
        locked = True
        reverted = await host.store.clear_revert(session_id)  # nothing to redo from now on
        if reverted or last != (state.messages[-1].id if state.messages else None):
            await host._reload(state)
    except asyncio.CancelledError:
        uncancel()
        await host._unlock(session_id)  # the store's write may have taken it meanwhile
        return False
    except BaseException:
        if locked:
            await host._unlock(session_id)
        raise
    return True


RegistryFor = Callable[[AgentType, ToolRegistry], ToolRegistry]


def command_parts(
    parts: TurnParts, state: SessionState, command: Expansion | None, registry_for: RegistryFor
) -> TurnParts:
    """The parts of a prompt's turn: for a command, its agent type's (as_agent), and what its
    `allowed-tools` allow, granted for this turn only (as a skill's are: skill_use.py; a deny
    rule still wins)."""
    if command is None:
        return parts
    if command.allowed:
        from agentls.session.skill_use import turn_grants

        state.skill_grants = (state.task, [*turn_grants(state), *command.allowed])
    return as_agent(parts, command.agent, registry_for) if command.agent is not None else parts


async def command_text(turn: Turn, command: Expansion | None, text: str | None) -> str | None:
    """The prompt of the turn: a command's with the outputs of its `!` commands, run first as
    bash calls of the turn (session/command_shell.py)."""
    if command is None or not command.shell or text is None:
        return text
    from agentls.session.command_shell import run_shell

    return await run_shell(turn, command.shell, command.shell_prefix, text)


def as_agent(parts: TurnParts, kind: AgentType, registry_for: RegistryFor) -> TurnParts:
    """The session's turn parts with the agent type's tools. MCP servers' tools come and go
    before each step (prepare_tools): the type's are taken again from the session's after it."""
    session_tools = parts.registry
    registry = registry_for(kind, session_tools)
    prepare = parts.prepare_tools

    async def prepare_tools(first: bool) -> list[str]:
        errors = await prepare(first) if prepare is not None else []
        fresh = registry_for(kind, session_tools)
        for name in registry.names():
            if name not in fresh:
                registry.unregister(name)
        for tool in fresh:
            if registry.get(tool.name) is not tool:
                registry.register(tool, replace=True)
        return errors

    # Its own system prompt (system_prompt.py): the main agent's, for the type's tools.
    prompt = dataclasses.replace(parts.prompt, kind="command", description=kind.description)
    return dataclasses.replace(
        parts, registry=registry, prepare_tools=prepare_tools, run_task=None, prompt=prompt
    )
