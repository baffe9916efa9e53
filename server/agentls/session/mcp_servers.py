"""The Agent's MCP servers (agentls.mcp): the settings' `mcpServers` and those a front end adds
(ACP's session/new), started at a session's first turn. Without any, the MCP SDK is never
imported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.session.commands import Command, CommandError
from agentls.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from agentls.mcp.manager import McpManager, ServerStatus


class AgentMcp:
    def __init__(
        self,
        root: Path,
        configured: Callable[[], dict[str, Any] | None],
        extra: dict[str, Any] | None,
    ) -> None:
        self.root = root
        self._configured = configured  # the settings' mcpServers, as they are now
        self._extra: dict[str, Any] = dict(extra or {})
        self._manager: McpManager | None = None

    def add(self, servers: dict[str, Any] | list[Any]) -> None:
        """More servers ({name: {command, args, env} | {type: "http", url, headers}}, see
        agentls.mcp.config; or ACP's list of them, {name, ...}), started at the next turn.
        Raises ValueError (the entry at fault named) for a list that is not ACP's shape."""
        if isinstance(servers, list):
            from agentls.mcp.config import from_acp

            servers = from_acp(servers)
        self._extra.update(servers)
        if self._manager is not None:
            self._manager.add_servers(servers)

    def reconfigure(self) -> None:
        """The settings changed: applied at the next turn."""
        if self._manager is not None:
            self._manager.configure(self._configured())

    def manager(self) -> McpManager | None:
        if self._manager is None and (self._configured() or self._extra):
            from agentls.mcp.manager import McpManager

            self._manager = McpManager(self.root)
            self._manager.configure(self._configured())
            self._manager.add_servers(self._extra)
        return self._manager

    async def status(self, start: bool = False) -> list[ServerStatus]:
        """The servers: their state and tools (`start`: start those not started yet)."""
        manager = self.manager()
        return [] if manager is None else await manager.status(start=start)

    async def prepare_tools(self, registry: ToolRegistry, first: bool) -> list[str]:
        """Before a step: the servers' tools, after the built-ins (see TurnParts); the problems
        of servers that failed to start, to be said."""
        manager = self.manager()
        if manager is None:
            return []
        problems = await manager.begin_turn() if first else []
        # At the first step too: a server that adds tools once it is initialized (npm's
        # server-everything does) says so with tools/list_changed right after its start; listed
        # again here, the first request has them, not only the next one.
        await manager.between_steps()
        registry.set_extra(manager.tools())
        return problems

    def commands(self) -> dict[str, Command]:
        """The running servers' prompts as /commands (`/mcp__<server>__<prompt> args`)."""
        manager = self._manager
        if manager is None:
            return {}
        from agentls.mcp.prompts import describe

        return {
            name: Command(name, describe(server, prompt), "mcp")
            for name, server, prompt in manager.prompts()
        }

    async def start(self) -> None:
        """Start the servers not started yet (a prompt's command named before any turn)."""
        manager = self.manager()
        if manager is not None:
            await manager.status(start=True)

    async def prompt(self, name: str, line: str) -> str:
        """The text of the prompt of /`name` for the arguments in `line`; CommandError when it
        cannot be had (a missing argument, the server's refusal)."""
        manager = self._manager
        found = [(s, p) for n, s, p in manager.prompts() if n == name] if manager else []
        if manager is None or not found:
            raise CommandError(f"/{name}: no MCP server offers this prompt now")
        server, prompt = found[0]
        try:
            text = await manager.get_prompt(server, prompt, line)
        except ValueError as exc:
            raise CommandError(f"/{name}: {exc}") from None
        if not text.strip():
            raise CommandError(f"/{name}: the MCP server's prompt is empty")
        return text

    async def aclose(self) -> None:
        """Every server, and every process one started, stops."""
        if self._manager is not None:
            await self._manager.aclose()
