"""The read-only language tools: symbols, definition, references, hover, callers. They ask the
workspace's language servers (the editor's own, or ones agentls starts) and follow the read
rules for the file they are given and for every file an answer names."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.language.positions import uri_to_path
from agentls.language.render import (
    Hit,
    Symbol,
    hover_text,
    kind_name,
    plural,
    render_hits,
    render_symbols,
)
from agentls.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
    input_dict,
)
from agentls.tools.support.lookup import (
    NARROW,
    PlacesInput,
    Shown,
    SymbolInput,
    as_list,
    ask,
    ask_if_offered,
    file_counts,
    hits_of,
    is_import,
    locate,
    location_of,
    only_included,
)

MODULE_LEVEL = "module level"
_INSTEAD = (
    " Prefer it over grep for code: it follows the language's own scoping and imports, so it "
    "skips comments, strings and namesakes."
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
        "file's outline). Each result gives its kind, name, container, file and line." + _INSTEAD
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


class _AtSymbol(Tool):
    """A tool that asks one method about the symbol at {path, symbol, line?}."""

    input_model = SymbolInput
    read_only = True
    verb = ""

    def title(self, raw: dict[str, Any]) -> str:
        symbol = raw.get("symbol")
        return f"{self.name} {symbol}" if isinstance(symbol, str) else self.name


class DefinitionTool(_AtSymbol):
    name = "definition"
    description = (
        "Go to the definition of a symbol with the language server: give the file it is used "
        "in, its name, and about which line. Returns where it is defined, with the line." + _INSTEAD
    )
    verb = "Find the definition of"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, SymbolInput)
        at = await locate(ctx, self.name, params, verb=self.verb)
        shown = Shown(ctx)
        result = await ask(ctx, "textDocument/definition", at.params(), at.path)
        hits = await hits_of(shown, as_list(result))
        head = f"Definition of {at.position.note}:\n"
        if not hits:
            return ToolResult(head + "none found." + shown.note())
        return ToolResult(
            head + render_hits(hits) + shown.note(), title=self.title(input_dict(params))
        )


def places_text(head: str, hits: list[Hit], include: str | None, left_out: int) -> str:
    """references' and callers' answer: the head, every file with its count, the places (up to
    the cap, then how to narrow them)."""
    where = f" matching {include!r}" if include else ""
    outside = f" ({left_out} more in other files)" if left_out else ""
    files = len({h.rel for h in hits})
    counts = file_counts(hits) if files > 1 else ""
    return (
        f"{head} in {plural(files, 'file')}{where}{outside}:\n"
        f"{counts}{render_hits(hits, narrow=NARROW)}"
    )


class ReferencesTool(_AtSymbol):
    name = "references"
    description = (
        "Find every use of a symbol across the workspace with the language server (its "
        "definition included): give the file it is defined or used in, its name, and about which "
        "line. Returns every file with its count, then the places grouped by file, one line of "
        "context each; `include` (a glob) keeps the places in some files only." + _INSTEAD
    )
    input_model = PlacesInput
    verb = "Find references to"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, PlacesInput)
        at = await locate(ctx, self.name, params, verb=self.verb)
        shown = Shown(ctx)
        request = {**at.params(), "context": {"includeDeclaration": True}}
        result = await ask(ctx, "textDocument/references", request, at.path)
        hits, left_out = only_included(
            await hits_of(shown, as_list(result)), params.include, ctx.workspace.root
        )
        head = f"References to {at.position.note}: {plural(len(hits), 'place')}"
        if not hits:
            where = f" in files matching {params.include!r}" if params.include else ""
            outside = f" ({left_out} in other files)" if left_out else ""
            return ToolResult(head + where + outside + "." + shown.note())
        return ToolResult(
            places_text(head, hits, params.include, left_out) + shown.note(),
            title=self.title(input_dict(params)),
        )


class HoverTool(_AtSymbol):
    name = "hover"
    description = (
        "Show a symbol's type, signature and documentation from the language server (what the "
        "editor shows on hover): give the file, the name and about which line."
    )
    verb = "Hover over"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, SymbolInput)
        at = await locate(ctx, self.name, params, verb=self.verb)
        # A hover shows the definition's value and docstring: never from a file the model may
        # not read (a secret, a denied file, outside the workspace but for installed libraries).
        # A server that offers no definition, or fails to give one, is not checked.
        try:
            _, found = await ask_if_offered(ctx, "textDocument/definition", at.params(), at.path)
        except ToolError:
            found = None
        for item in as_list(found):
            where = location_of(item)
            if where is not None and not (ctx.may_show(where[0]) or _library(ctx, where[0])):
                return ToolResult(
                    f"Hover on {at.position.note}: withheld, it is defined in a file you may not "
                    "read (a secret file, a file a rule denies or a file outside the workspace)."
                )
        result = await ask(ctx, "textDocument/hover", at.params(), at.path)
        text = hover_text(result)
        head = f"Hover on {at.position.note}:\n"
        return ToolResult(head + (text or "nothing to show."), title=self.title(input_dict(params)))


_LIBRARY_DIRS = frozenset({"site-packages", "dist-packages", "node_modules", "typeshed"})
# Type stubs (an editor's bundled typeshed, TypeScript's lib.*.d.ts) declare, they hold no values.
_STUBS = (".pyi", ".d.ts")


def _library(ctx: ToolContext, path: Path) -> bool:
    """An installed library's file outside the workspace (its docs are no secret)."""
    if not ctx.is_outside(path):
        return False
    stdlib = {Path(sys.base_prefix, "lib"), Path(sys.prefix, "lib")}
    return bool(
        _LIBRARY_DIRS.intersection(path.parts)
        or path.name.endswith(_STUBS)
        or stdlib.intersection(path.parents)
    )


class CallersTool(_AtSymbol):
    name = "callers"
    description = (
        "Find the functions that call a function or method (incoming calls) with the language "
        "server: give the file, its name and about which line. Returns every file with its "
        "count, then each caller with the lines of its calls, grouped by file; `include` (a "
        "glob) keeps the callers in some files only." + _INSTEAD
    )
    input_model = PlacesInput
    verb = "Find the callers of"

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, PlacesInput)
        at = await locate(ctx, self.name, params, verb=self.verb)
        shown = Shown(ctx)
        note = ""
        prepare = "textDocument/prepareCallHierarchy"
        offered, answer = await ask_if_offered(ctx, prepare, at.params(), at.path)
        items = as_list(answer) if offered else None
        if items is not None:
            hits = await self._hierarchy(ctx, shown, items, at.path)
        else:
            hits = await self._from_references(ctx, shown, at.params(), at.path, params.symbol)
            note = "\n(The language server has no call hierarchy: callers from its references.)"
        hits, left_out = only_included(hits, params.include, ctx.workspace.root)
        # A caller is a function in a file: two namesakes in two files are two callers; uses
        # outside any function are counted apart.
        callers = {(h.rel, h.label) for h in hits if h.label != MODULE_LEVEL}
        head = f"Callers of {at.position.note}: {plural(len(callers), 'caller')}"
        top = len({h.line for h in hits if h.label == MODULE_LEVEL})
        if top:
            head += f" and {plural(top, 'use')} at module level"
        if not hits:
            where = f" in files matching {params.include!r}" if params.include else ""
            outside = f" ({left_out} in other files)" if left_out else ""
            return ToolResult(head + where + outside + "." + note + shown.note())
        return ToolResult(
            places_text(head, hits, params.include, left_out) + note + shown.note(),
            title=self.title(input_dict(params)),
        )

    async def _hierarchy(
        self, ctx: ToolContext, shown: Shown, items: list[Any], path: Path
    ) -> list[Hit]:
        hits: list[Hit] = []
        for item in items[:1]:
            calls = as_list(await ask(ctx, "callHierarchy/incomingCalls", {"item": item}, path))
            for call in calls:
                caller = call.get("from") if isinstance(call, dict) else None
                if not isinstance(caller, dict):
                    continue
                where = location_of(caller)
                if where is None:
                    continue
                label = f"{kind_name(caller.get('kind'))} {caller.get('name', '?')}"
                ranges = call.get("fromRanges") or [caller.get("selectionRange")]
                for rng in ranges if isinstance(ranges, list) else [None]:
                    start = rng.get("start") if isinstance(rng, dict) else None
                    line = start.get("line") if isinstance(start, dict) else None
                    line = line if isinstance(line, int) and line >= 0 else where[1]
                    hit = await shown.hit(where[0], line, label)
                    if hit is not None:
                        hits.append(hit)
        return hits

    async def _from_references(
        self, ctx: ToolContext, shown: Shown, params: dict[str, Any], path: Path, symbol: str
    ) -> list[Hit]:
        """References that are uses (not the definition, not an import), each labelled with the
        function it is in (from the file's document symbols)."""
        request = {**params, "context": {"includeDeclaration": False}}
        hits: list[Hit] = []
        outlines: dict[Path, list[tuple[int, int, str]]] = {}
        defines = re.compile(
            rf"^\s*(?:async\s+)?(?:def|class|function|fn|func)\s+{re.escape(symbol)}\b"
        )
        for item in as_list(await ask(ctx, "textDocument/references", request, path)):
            where = location_of(item)
            if where is None or not shown.allowed(where[0]):
                continue
            lines = await shown.lines(where[0])
            text = lines[where[1]] if lines is not None and 0 <= where[1] < len(lines) else None
            # A server may list the definition anyway; an import names it but calls nothing.
            if (text is not None and defines.match(text)) or is_import(lines, where[1]):
                continue
            if where[0] not in outlines:
                outlines[where[0]] = await self._functions(ctx, where[0])
            # The innermost function around the line that is more than the line itself (an
            # imported name is outlined as a one-line function by some servers).
            enclosing = [f for f in outlines[where[0]] if f[0] <= where[1] <= f[1] and f[0] < f[1]]
            label = min(enclosing, key=lambda f: f[1] - f[0])[2] if enclosing else MODULE_LEVEL
            hits.append(Hit(ctx.relative(where[0]), where[1], text, label))
        return hits

    async def _functions(self, ctx: ToolContext, path: Path) -> list[tuple[int, int, str]]:
        """(first line, last line, "kind name") of the file's functions and methods."""
        try:
            items = as_list(
                await ctx.workspace.languages.request(
                    "textDocument/documentSymbol", {"textDocument": {"uri": path.as_uri()}}, path
                )
            )
        except Exception:  # noqa: BLE001 - labels are a nicety; the hits stand without them
            return []
        out: list[tuple[int, int, str]] = []

        def walk(nodes: list[Any]) -> None:
            for node in nodes:
                if not isinstance(node, dict):
                    continue
                rng = node.get("range") or (node.get("location") or {}).get("range")
                if node.get("kind") in (6, 9, 12) and isinstance(rng, dict):
                    label = f"{kind_name(node['kind'])} {node.get('name', '?')}"
                    out.append((rng["start"]["line"], rng["end"]["line"], label))
                if isinstance(node.get("children"), list):
                    walk(node["children"])

        walk(items)
        return out
