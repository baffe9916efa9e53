"""callers: the functions that call a function (incoming calls), from the language server's
call hierarchy, else from its references."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentls.language.render import (
    Hit,
    kind_name,
    plural,
)
from agentls.tools.base import (
    ToolContext,
    ToolInput,
    ToolResult,
    expect_input,
    input_dict,
)
from agentls.tools.support.lookup import (
    INSTEAD,
    MODULE_LEVEL,
    AtSymbol,
    PlacesInput,
    Shown,
    as_list,
    ask,
    ask_if_offered,
    is_import,
    locate,
    location_of,
    only_included,
    places_text,
)


class CallersTool(AtSymbol):
    name = "callers"
    description = (
        "Find the functions that call a function or method (incoming calls) with the language "
        "server: give the file, its name and about which line. Returns every file with its "
        "count, then each caller with the lines of its calls, grouped by file; `include` (a "
        "glob) keeps the callers in some files only." + INSTEAD
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
