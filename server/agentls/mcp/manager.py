"""The MCP servers of one Agent: started lazily at a session's first turn, checked at each turn
(a crashed one is restarted once per turn), their tools offered in a stable order (built-ins
first, then these, sorted by name, so prompt caching survives a server being added), and all of
them stopped with the agent.

A server that fails is reported once (its name, what happened, its stderr's last lines) and the
session goes on without its tools. A server's `tools/list_changed` is honoured before the next
step.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agentls.mcp.config import ServerConfig, parse_servers
from agentls.mcp.connection import Connection, Progress, ServerFailed
from agentls.mcp.names import exact_first, tool_name
from agentls.mcp.prompts import arguments, command_name, prompt_text
from agentls.mcp.resources import RESOURCES, ResourcesTool, read_output
from agentls.mcp.results import McpOutput, convert
from agentls.mcp.tool import make_tool
from agentls.tools.base import Tool, ToolError

log = logging.getLogger(__name__)


@dataclass
class ToolStatus:
    name: str  # as the model sees it (mcp__server__tool)
    remote_name: str
    read_only_hint: bool


@dataclass
class ServerStatus:
    name: str
    transport: str  # "stdio" or "http"
    target: str  # the command line or the url
    status: str  # "not started", "starting", "running", "failed", "stopped", "bad config"
    error: str | None = None
    tools: list[ToolStatus] = field(default_factory=list)


class McpManager:
    """The configured servers and their connections."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._raw: dict[str, Any] = {}
        self._extra: dict[str, Any] = {}
        self._configs: dict[str, ServerConfig] = {}
        self._errors: dict[str, str] = {}
        self._connections: dict[str, Connection] = {}
        self._dirty = True
        # Turns begun; the turn in which each server was last restarted (once per turn).
        self._turn = 0
        self._restarted: dict[str, int] = {}
        # Errors said already (each failure is reported once, not at every turn).
        self._reported: set[str] = set()
        self._lock = asyncio.Lock()
        # The tools made, and what they were made from (each server's state and tool list).
        self._tools: list[Tool] = []
        self._tools_key: tuple[tuple[str, str, int], ...] | None = None
        self._changed = False

    # ---- configuration --------------------------------------------------------------------

    def configure(self, raw: Any) -> None:
        """The `mcpServers` of the settings; applied at the next turn (a changed server is
        restarted, a removed one stopped)."""
        raw = raw if isinstance(raw, dict) else {}
        if raw != self._raw:
            self._raw = dict(raw)
            self._dirty = True

    def add_servers(self, raw: dict[str, Any]) -> None:
        """More servers (in the `mcpServers` shape) on top of the settings' own, e.g. those a
        front end's session asks for (ACP session/new); a name already used is replaced."""
        self._extra.update(raw)
        self._dirty = True

    @property
    def configured(self) -> bool:
        return bool(self._raw or self._extra)

    async def _reconcile(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        parsed = parse_servers({**self._raw, **self._extra}, root=self.root)
        self._errors = parsed.errors
        for name, connection in list(self._connections.items()):
            if parsed.servers.get(name) != connection.config:
                del self._connections[name]
                await connection.stop()
                self._restarted.pop(name, None)
        for name, config in parsed.servers.items():
            if name not in self._connections:
                self._connections[name] = Connection(config, self._tools_changed)
        self._configs = parsed.servers

    def _tools_changed(self) -> None:
        self._changed = True

    # ---- the turn ---------------------------------------------------------------------------

    async def begin_turn(self) -> list[str]:
        """Start the servers not started yet and restart crashed ones (once per turn); returns
        what failed, each said once."""
        async with self._lock:
            self._turn += 1
            await self._reconcile()
            problems = [f"agentls: {error}" for error in self._errors.values()]
            await asyncio.gather(*(self._ensure(c) for c in self._connections.values()))
            for connection in self._connections.values():
                if connection.status == "failed" and connection.error:
                    problems.append(connection.error)
            fresh = [p for p in problems if p not in self._reported]
            self._reported.update(fresh)
            return fresh

    async def _ensure(self, connection: Connection) -> None:
        try:
            await self._ensure_one(connection)
        except Exception as exc:  # noqa: BLE001 - one server's trouble is said, never the turn's
            # One line (the traceback only with AGENTLS_LOG=DEBUG): said to the user below.
            log.warning(
                "MCP server %s: %s", connection.name, exc, exc_info=log.isEnabledFor(logging.DEBUG)
            )
            connection.status = "failed"
            connection.error = f"MCP server {connection.name!r} failed: {exc}"

    async def _ensure_one(self, connection: Connection) -> None:
        if connection.status == "running" and await connection.alive():
            return
        if connection.status == "failed" and connection.name not in self._restarted:
            # It failed to start: not tried again at every turn (a config change tries again).
            return
        await self._restart(connection)

    async def _restart(self, connection: Connection) -> bool:
        """Start it (again), at most once per turn once it has run; whether it runs."""
        if self._restarted.get(connection.name) == self._turn:
            return False
        if connection.status == "failed":
            self._restarted[connection.name] = self._turn
        try:
            await connection.start()
        except ServerFailed:
            return False
        self._restarted.setdefault(connection.name, 0)
        self._reported = {p for p in self._reported if not p.startswith(_about(connection))}
        return True

    async def between_steps(self) -> bool:
        """List again the tools of servers that said they changed; whether the tools changed."""
        changed = self._changed
        self._changed = False
        for connection in list(self._connections.values()):
            if connection.tools_changed and await connection.refresh_tools():
                changed = True
        return changed

    def tools(self) -> list[Tool]:
        """The running servers' tools, sorted by name (made again only when a server started,
        stopped or listed its tools again)."""
        key = tuple((name, c.status, id(c.tools)) for name, c in sorted(self._connections.items()))
        if key != self._tools_key:
            made: list[Tool] = []
            taken: set[str] = set()
            for server in sorted(self._connections):
                connection = self._connections[server]
                if connection.status != "running":
                    continue
                for tool in sorted(connection.tools, key=lambda t: exact_first(t.name, server)):
                    name = tool_name(server, tool.name, taken)
                    if name in taken:
                        continue
                    taken.add(name)
                    made.append(make_tool(server, name, tool, self.call))
                if connection.has_resources:  # after its tools: one of theirs keeps its name
                    name = tool_name(server, RESOURCES, taken)
                    if name not in taken:
                        taken.add(name)
                        made.append(self._resources_tool(server, name))
            self._tools = sorted(made, key=lambda t: t.name)
            self._tools_key = key
        return list(self._tools)

    async def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
    ) -> McpOutput:
        """Call a tool (`progress`: given each progress line the server sends for it); a server
        gone since the turn began is restarted first (once per turn); one that dies during the
        call is restarted for the next call, and the model is told."""
        connection = self._connections.get(server)
        if connection is None:
            return McpOutput(f"The MCP server {server!r} is no longer configured.", is_error=True)
        if connection.status != "running" and not await self._restart(connection):
            return McpOutput(connection.error or f"MCP server {server!r} is not running", True)
        try:
            result = await connection.call(tool, arguments, progress)
        except ServerFailed as exc:
            again = await self._restart(connection)
            after = (
                "It was restarted: the call can be made again (it may have done part of its work)."
                if again
                else "It stays stopped for the rest of this turn."
            )
            return McpOutput(f"{exc}\n{after}", is_error=True)
        except MCPError as exc:
            return McpOutput(f"The MCP server {server!r} answered: {exc.error.message}", True)
        except TimeoutError:
            return McpOutput(f"The MCP server {server!r} did not answer in time.", True)
        return convert(result)

    def prompts(self) -> list[tuple[str, str, types.Prompt]]:
        """The running servers' prompts as slash commands: (command name, server, prompt)."""
        out: list[tuple[str, str, types.Prompt]] = []
        taken: set[str] = set()
        for server in sorted(self._connections):
            connection = self._connections[server]
            if connection.status != "running":
                continue
            for prompt in connection.prompts:
                name = command_name(server, prompt.name)
                if name is not None and name not in taken:
                    taken.add(name)
                    out.append((name, server, prompt))
        return out

    async def get_prompt(self, server: str, prompt: types.Prompt, line: str) -> str:
        """The prompt's text for the arguments in `line`; ValueError says what went wrong."""
        given = arguments(prompt, line)
        connection = self._connections.get(server)
        if connection is None or connection.status != "running":
            raise ValueError(f"the MCP server {server!r} is not running")
        try:
            return prompt_text(await connection.get_prompt(prompt.name, given))
        except (ServerFailed, MCPError, TimeoutError) as exc:
            raise ValueError(_answered(server, exc)) from exc

    def _resources_tool(self, server: str, name: str) -> ResourcesTool:
        async def lister() -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
            connection = self._usable(server)
            try:
                return await connection.resources()
            except (ServerFailed, MCPError, TimeoutError) as exc:
                raise ToolError(_answered(server, exc)) from exc

        async def reader(uri: str) -> McpOutput:
            connection = self._usable(server)
            try:
                return read_output(await connection.read_resource(uri))
            except (ServerFailed, MCPError, TimeoutError) as exc:
                return McpOutput(_answered(server, exc), is_error=True)

        return ResourcesTool(server, name, lister, reader)

    def _usable(self, server: str) -> Connection:
        connection = self._connections.get(server)
        if connection is None or connection.status != "running":
            raise ToolError(f"The MCP server {server!r} is not running.")
        return connection

    # ---- status and shutdown ------------------------------------------------------------------

    async def status(self, start: bool = False) -> list[ServerStatus]:
        """Every configured server: its state and tools; `start`: start those not started."""
        if start:
            await self.begin_turn()
        else:
            async with self._lock:
                await self._reconcile()
        out: list[ServerStatus] = []
        for name in sorted({*self._connections, *self._errors}):
            connection = self._connections.get(name)
            if connection is None:
                out.append(ServerStatus(name, "?", "", "bad config", self._errors[name]))
                continue
            config = connection.config
            state = "not started" if connection.status == "stopped" else connection.status
            status = ServerStatus(
                name, config.transport, config.describe(), state, connection.error
            )
            if connection.status == "running":
                taken: set[str] = set()
                for tool in sorted(connection.tools, key=lambda t: exact_first(t.name, name)):
                    model_name = tool_name(name, tool.name, taken)
                    taken.add(model_name)
                    hint = bool(tool.annotations and tool.annotations.read_only_hint)
                    status.tools.append(ToolStatus(model_name, tool.name, hint))
            out.append(status)
        return out

    async def aclose(self) -> None:
        connections = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)


def _answered(server: str, exc: Exception) -> str:
    if isinstance(exc, MCPError):
        return f"The MCP server {server!r} answered: {exc.error.message}"
    if isinstance(exc, TimeoutError):
        return f"The MCP server {server!r} did not answer in time."
    return str(exc)


def _about(connection: Connection) -> str:
    return f"MCP server {connection.name!r}"
