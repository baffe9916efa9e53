"""An MCP server's tool as one of the agent's tools: named `mcp__<server>__<tool>`, asking before
each call like any tool (a server's readOnlyHint is shown in the question, never trusted), its
result read by results.convert."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import mcp_types as types
from pydantic import ConfigDict

from agentls.mcp.results import McpOutput
from agentls.tools.base import PermissionQuery, Tool, ToolContext, ToolInput, ToolResult
from agentls.tools.support.outputs import SavedOutput

# Longer descriptions are cut (a server's description is its own, and goes into every request).
MAX_DESCRIPTION = 2048

# (server, tool, arguments, progress): progress is given each progress line of the call.
Caller = Callable[[str, str, dict[str, Any], Callable[[str], None]], Awaitable[McpOutput]]


class McpInput(ToolInput):
    """Whatever the tool's schema says: the server checks its own input."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool):
    """Base of the tools of MCP servers; `make_tool` makes one class per tool."""

    input_model: ClassVar[type[ToolInput]] = McpInput
    read_only: ClassVar[bool] = False  # readOnlyHint is the server's word: never trusted
    server: ClassVar[str]
    remote_name: ClassVar[str]
    input_schema: ClassVar[dict[str, Any]]
    read_only_hint: ClassVar[bool]

    def __init__(self, call: Caller) -> None:
        self._call = call

    def schema(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def title(self, raw: dict[str, Any]) -> str:
        hint = " (the server says it only reads)" if self.read_only_hint else ""
        return f"{self.server}: {self.remote_name}{hint}"

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        arguments: dict[str, Any] = params.model_dump() if isinstance(params, McpInput) else {}
        title = self.title(arguments)
        await ctx.authorize(
            PermissionQuery(tool=self.name, subject=self.name, title=title, input=arguments)
        )
        # The server's progress notifications are the call's progress (the panel, the CLI, ACP).
        output = await self._call(self.server, self.remote_name, arguments, ctx.progress)
        text = output.text
        if output.full is not None:  # cut: all of it saved, as bash's long output
            saved = SavedOutput(ctx.session_id, f"mcp-{ctx.call_id}", 0)
            saved.feed(output.full.encode("utf-8", "replace"))
            path = saved.close()
            if path is not None:
                text += (
                    f"\n(Only the start and the end of the output are shown. All of it is saved "
                    f"in {path}: read it with the read tool, using offset and limit for a part.)"
                )
        result = ToolResult(text, is_error=output.is_error, title=title)
        if output.images:
            result.metadata["images"] = output.images
        return result


def _input_schema(tool: types.Tool) -> dict[str, Any]:
    schema = dict(tool.input_schema or {})
    if schema.get("type") != "object":
        schema = {"type": "object", "properties": {}}
    return schema


def make_tool(server: str, name: str, tool: types.Tool, call: Caller) -> McpTool:
    """The agent's tool `name` for `tool` of `server`."""
    description = (tool.description or tool.title or tool.name).strip()
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    hint = bool(tool.annotations and tool.annotations.read_only_hint)
    attributes: dict[str, Any] = {
        "name": name,
        "description": f"{description}\n(Tool {tool.name!r} of the MCP server {server!r}.)",
        "server": server,
        "remote_name": tool.name,
        "input_schema": _input_schema(tool),
        "read_only_hint": hint,
    }
    cls = type(f"McpTool_{name}", (McpTool,), attributes)
    made: McpTool = cls(call)
    return made
