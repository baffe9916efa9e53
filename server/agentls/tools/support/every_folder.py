"""glob, grep and list without a path in a workspace of several folders: the call runs in each
folder (workspace/folders.py), and the answers are put together, each file named with its
folder's name. With one folder, or a path given, the tool runs as it is."""

from __future__ import annotations

from typing import Any, Protocol

from agentls.tools.base import ToolContext, ToolError, ToolResult
from agentls.workspace.folders import folders_of


class _Runs(Protocol):
    async def run(self, params: Any, ctx: ToolContext) -> ToolResult: ...


async def in_every_folder(tool: _Runs, params: Any, ctx: ToolContext) -> ToolResult | None:
    """The tool's answer from every folder, or None when it is to run once as it is."""
    raw = getattr(params, "path", None)
    if raw is not None and raw.strip() not in ("", "."):
        return None
    if getattr(tool, "name", "") == "glob" and str(getattr(params, "pattern", "")).startswith("/"):
        return None  # an absolute pattern names its folder itself
    folders = folders_of(ctx.workspace)
    if not folders.several:
        return None
    outputs: list[str] = []
    errors = 0
    for folder in folders.all:
        try:
            result = await tool.run(params.model_copy(update={"path": folder.name}), ctx)
        except ToolError as exc:  # one folder's failure (a refusal) does not hide the others'
            result = ToolResult(str(exc), is_error=True)
        errors += result.is_error
        outputs.append(result.output)
    return ToolResult("\n\n".join(outputs), is_error=errors == len(outputs))
