"""symbols: a file's outline, or the workspace's symbols matching a name, from the language
servers (the editor's own, or ones agentls starts); every file an answer names follows the read
rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.language.positions import uri_to_path
from agentls.language.render import (
    Symbol,
    plural,
    render_symbols,
)
from agentls.tools.base import (
    Tool,
    ToolContext,
    ToolInput,
    ToolResult,
    expect_input,
)
from agentls.tools.support.lookup import (
    INSTEAD,
    Shown,
    as_list,
    ask,
    location_of,
)


class SymbolsInput(ToolInput):
    query: str = Field(description="A name or part of one (`parse`, `Config`).")
    path: str | None = Field(
        default=None, description="Only this file's symbols (its outline); default: the workspace."
    )


class SymbolsTool(Tool):
    name = "symbols"
    description = (
        "Find symbols (functions, classes, methods, variables) by name with the language server: "
        "across the workspace, or in one file when `path` is given (an empty query then lists the "
        "file's outline). Each result gives its kind, name, container, file and line." + INSTEAD
    )
    input_model = SymbolsInput
    read_only = True

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, SymbolsInput)
        shown = Shown(ctx)
        query = params.query.strip()
        if params.path is not None:
            path = ctx.resolve_path(params.path, tool=self.name)
            rel = ctx.relative(path)
            await ctx.authorize_path(self.name, path, f"Symbols of {rel}", params)
            result = await ask(
                ctx, "textDocument/documentSymbol", {"textDocument": {"uri": path.as_uri()}}, path
            )
            symbols = _document_symbols(as_list(result), rel, path, None)
            where = rel
        else:
            result = await ask(ctx, "workspace/symbol", {"query": query}, None)
            symbols = []
            for item in as_list(result):
                symbol = _workspace_symbol(item, shown)
                if symbol is not None:
                    symbols.append(symbol)
            where = "the workspace"
        if query:
            lowered = query.lower()
            symbols = [s for s in symbols if lowered in s.name.lower()]
        if not symbols:
            return ToolResult(f"No symbols matching {query!r} in {where}.{shown.note()}")
        head = f"{plural(len(symbols), 'symbol')} matching {query!r} in {where}:\n"
        return ToolResult(head + render_symbols(symbols) + shown.note(), title=f"Symbols {query}")


def _document_symbols(
    items: list[Any], rel: str, path: Path, container: str | None
) -> list[Symbol]:
    """DocumentSymbol trees flattened (container: the enclosing names), or SymbolInformation."""
    out: list[Symbol] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        if "location" in item:  # SymbolInformation
            where = location_of(item["location"])
            line = where[1] if where is not None else 0
            out.append(
                Symbol(item["name"], item.get("kind", 0), item.get("containerName"), rel, line)
            )
            continue
        rng = item.get("selectionRange") or item.get("range") or {}
        line = rng.get("start", {}).get("line", 0) if isinstance(rng, dict) else 0
        out.append(Symbol(item["name"], item.get("kind", 0), container, rel, line))
        children = item.get("children")
        if isinstance(children, list):
            inner = f"{container}.{item['name']}" if container else item["name"]
            out.extend(_document_symbols(children, rel, path, inner))
    return out


def _workspace_symbol(item: Any, shown: Shown) -> Symbol | None:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    location = item.get("location")
    where = location_of(location)
    if where is None and isinstance(location, dict) and isinstance(location.get("uri"), str):
        path = uri_to_path(location["uri"])  # a WorkspaceSymbol without a range
        where = (path, 0) if path is not None else None
    if where is None or not shown.allowed(where[0]):
        return None
    rel = shown.relative(where[0])
    return Symbol(item["name"], item.get("kind", 0), item.get("containerName"), rel, where[1])
