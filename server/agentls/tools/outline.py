"""outline: a file's structure from the language server (textDocument/documentSymbol) as an
indented tree, each symbol with its kind and its line range, so that the model reads the ranges
it needs instead of the whole file. A function's local variables are left out (its nested
functions and classes are kept), and so are the names a top-level import brings in (some servers
list them); a range starts at the decorators above its line (jedi's start at `def`, pyright's at
the decorator), so that reading it shows the whole definition; the file's length is said."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pydantic import Field

from agentls.language.render import kind_name, plural
from agentls.tools.base import Tool, ToolContext, ToolInput, ToolResult, expect_input
from agentls.tools.support.lookup import as_list, ask, is_import, read_source

METHOD = "textDocument/documentSymbol"
MAX_ENTRIES = 400
INDENT = "  "
# Symbol kinds whose children that are values (variables, constants, ...) are locals, not
# structure: method, constructor, function.
CALLABLE = frozenset({6, 9, 12})
VALUES = frozenset({7, 8, 13, 14, 15, 16, 17, 18, 19, 20, 21, 26})


class OutlineInput(ToolInput):
    path: str = Field(
        description="The file to outline: relative to the workspace root, or absolute."
    )


@dataclass(frozen=True)
class Entry:
    depth: int
    kind: int
    name: str
    first: int  # 0-based
    last: int  # 0-based, inclusive


class OutlineTool(Tool):
    name = "outline"
    description = (
        "A file's outline from the language server: its classes, functions, methods and "
        "top-level variables as an indented tree, each with its line range (`function parse "
        "12-40`). Use it before reading a large file, then `read` only the ranges you need "
        "(offset = the first line, limit = the range's length) instead of the whole file."
    )
    input_model = OutlineInput
    read_only = True
    # Offered only where a language server answers it (session/offer.py).
    language_method = METHOD

    def title(self, raw: dict[str, Any]) -> str:
        path = raw.get("path")
        return f"outline {path}" if isinstance(path, str) else self.name

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, OutlineInput)
        path = ctx.resolve_path(params.path, tool=self.name)
        rel = ctx.relative(path)
        await ctx.authorize_path(self.name, path, f"Outline of {rel}", params)
        text = await read_source(ctx, path, rel)
        result = await ask(ctx, METHOD, {"textDocument": {"uri": path.as_uri()}}, path)
        lines = text.splitlines()
        entries = [
            with_decorators(e, lines)
            for e in outline_entries(as_list(result))
            if e.depth or not is_import(lines, e.first)
        ]
        total = len(lines)
        head = f"{rel} ({plural(total, 'line')})"
        if not entries:
            return ToolResult(f"{head}: the language server lists no symbols in it.")
        return ToolResult(
            f"{head}, {plural(len(entries), 'symbol')}:\n{render_outline(entries)}",
            title=f"outline {rel}",
        )


def _range_of(item: dict[str, Any]) -> tuple[int, int] | None:
    rng = item.get("range")
    if rng is None and isinstance(item.get("location"), dict):
        rng = item["location"].get("range")  # SymbolInformation
    try:
        first, last = rng["start"]["line"], rng["end"]["line"]  # type: ignore[index]
    except (KeyError, TypeError):
        return None
    if not isinstance(first, int) or not isinstance(last, int):
        return None
    if last > first and rng["end"].get("character") == 0:  # type: ignore[index]
        last -= 1  # a range that ends at the start of the next line
    return first, max(first, last)


def outline_entries(items: list[Any], depth: int = 0, parent: int | None = None) -> list[Entry]:
    """DocumentSymbol trees as entries in document order (a callable's values left out); a flat
    SymbolInformation list as entries at depth 0."""
    out: list[Entry] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        kind = item["kind"] if isinstance(item.get("kind"), int) else 0
        if parent in CALLABLE and kind in VALUES:
            continue
        where = _range_of(item)
        if where is None:
            continue
        out.append(Entry(depth, kind, item["name"], *where))
        children = item.get("children")
        if isinstance(children, list):
            out.extend(outline_entries(children, depth + 1, kind))
    return sorted(out, key=lambda e: (e.first, e.depth)) if depth == 0 else out


def with_decorators(entry: Entry, lines: list[str]) -> Entry:
    """The entry starting at the first of the decorator lines (`@...`) right above it."""
    first = entry.first
    while 0 < first <= len(lines) and lines[first - 1].lstrip().startswith("@"):
        first -= 1
    return entry if first == entry.first else replace(entry, first=first)


def render_outline(entries: list[Entry], cap: int = MAX_ENTRIES) -> str:
    """One symbol a line, indented by depth: `class Box 8-10` (1-based lines; one line: `8`)."""
    lines = []
    for entry in entries[:cap]:
        span = (
            f"{entry.first + 1}"
            if entry.first == entry.last
            else f"{entry.first + 1}-{entry.last + 1}"
        )
        lines.append(f"{INDENT * entry.depth}{kind_name(entry.kind)} {entry.name} {span}")
    if len(entries) > cap:
        lines.append(f"... {len(entries) - cap} more; read the rest of the file by ranges.")
    return "\n".join(lines)
