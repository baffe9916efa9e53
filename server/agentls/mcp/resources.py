"""An MCP server's resources as one tool, `mcp__<server>__resources`, offered when the server
says it has resources: without `uri` it lists them (and its URI templates), with `uri` it reads
one. Each call asks like any of the server's tools; a `file://` resource is a file of this
machine, so reading it goes through the `read` rules first (a secret asks, a denied path is
refused, whatever the server would answer)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlparse

import mcp_types as types
from pydantic import Field

from agentls.mcp.results import McpOutput, cap, resource_contents
from agentls.tools.base import PermissionQuery, Tool, ToolContext, ToolInput, ToolResult

RESOURCES = "resources"  # the tool's part of the name: mcp__<server>__resources
MAX_LISTED = 500


class ResourcesInput(ToolInput):
    uri: str | None = Field(
        default=None, description="The resource to read; leave it out to list the resources."
    )


Lister = Callable[[], Awaitable[tuple[list[types.Resource], list[types.ResourceTemplate]]]]
Reader = Callable[[str], Awaitable[McpOutput]]


class ResourcesTool(Tool):
    """Lists or reads the resources of one MCP server."""

    input_model: ClassVar[type[ToolInput]] = ResourcesInput
    read_only = False  # the server's word: asked like its tools
    server: str

    def __init__(self, server: str, name: str, lister: Lister, reader: Reader) -> None:
        self.server = server
        self.name = name  # type: ignore[misc]  # one instance per server
        self.description = (  # type: ignore[misc]
            f"The resources of the MCP server {server!r}: without uri, lists them (uri, name, "
            "type, description) and its URI templates; with uri, reads that resource."
        )
        self._list = lister
        self._read = reader

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        uri = params.uri if isinstance(params, ResourcesInput) else None
        title = f"{self.server}: read {uri}" if uri else f"{self.server}: list resources"
        path = file_path(uri) if uri else None
        if path is not None:
            # A file of this machine: the read rules decide, as for the read tool.
            resolved = ctx.resolve_path(str(path), tool="read")
            await ctx.authorize_path("read", resolved, f"Read {ctx.relative(resolved)}", params)
        await ctx.authorize(
            PermissionQuery(
                tool=self.name, subject=self.name, title=title, input={"uri": uri} if uri else {}
            )
        )
        if not uri:
            resources, templates = await self._list()
            return ToolResult(listing(self.server, resources, templates), title=title)
        output = await self._read(uri)
        result = ToolResult(output.text, is_error=output.is_error, title=title)
        if output.images:
            result.metadata["images"] = output.images
        return result


def file_path(uri: str) -> Path | None:
    """The local path of a file:// URI (None for any other scheme)."""
    parsed = urlparse(uri)
    if parsed.scheme.lower() != "file":
        return None
    return Path(unquote(parsed.path))


def listing(
    server: str, resources: list[types.Resource], templates: list[types.ResourceTemplate]
) -> str:
    if not resources and not templates:
        return f"The MCP server {server!r} lists no resources."
    lines = [f"{len(resources)} resource(s) of the MCP server {server!r}:"]
    for resource in resources[:MAX_LISTED]:
        about = ", ".join(
            x for x in (resource.mime_type, (resource.description or "").strip()[:200]) if x
        )
        lines.append(f"- {resource.uri} ({resource.name}{'; ' + about if about else ''})")
    if len(resources) > MAX_LISTED:
        lines.append(f"... and {len(resources) - MAX_LISTED} more")
    if templates:
        lines.append("URI templates (fill in the {parts} and read the URI):")
        for template in templates[:MAX_LISTED]:
            lines.append(f"- {template.uri_template} ({template.name})")
    return cap("\n".join(lines))


def read_output(result: types.ReadResourceResult) -> McpOutput:
    """resources/read's contents as what the model reads."""
    return resource_contents(result.contents)
