"""callees: the functions a function calls (outgoing calls), from the language server's call
hierarchy (textDocument/prepareCallHierarchy, then callHierarchy/outgoingCalls): each callee with
where it is defined and the lines of the function that call it."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentls.language.render import MAX_HITS, kind_name, plural
from agentls.tools.base import ToolContext, ToolInput, ToolResult, expect_input, input_dict
from agentls.tools.support.goto import place_hit
from agentls.tools.support.lookup import (
    INSTEAD,
    AtSymbol,
    Shown,
    SymbolInput,
    as_list,
    ask,
    locate,
    location_of,
)

PREPARE = "textDocument/prepareCallHierarchy"
METHOD = "callHierarchy/outgoingCalls"
MAX_CONTEXT_CHARS = 160


@dataclass
class _Callee:
    label: str  # "function take"
    where: str  # "pkg/core.py:1", or why it is not said
    lines: set[int] = field(default_factory=set)  # 0-based lines of the caller that call it


class CalleesTool(AtSymbol):
    name = "callees"
    description = (
        "Find the functions and methods a function calls (outgoing calls) with the language "
        "server: give the file, the function's name and about which line. Returns each callee "
        "with where it is defined and the lines of the function that call it, in the order of "
        "the first call." + INSTEAD
    )
    verb = "Find the calls made by"
    # Offered only where a language server answers it (session/offer.py).
    language_method = METHOD

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, SymbolInput)
        at = await locate(ctx, self.name, params, verb=self.verb)
        shown = Shown(ctx)
        items = as_list(await ask(ctx, PREPARE, at.params(), at.path))
        head = f"Calls made by {at.position.note}"
        if not items or not isinstance(items[0], dict):
            return ToolResult(f"{head}: no function or method there to follow.")
        calls = as_list(await ask(ctx, METHOD, {"item": items[0]}, at.path))
        callees: dict[tuple[str, str], _Callee] = {}
        for call in calls:
            target = call.get("to") if isinstance(call, dict) else None
            if not isinstance(target, dict):
                continue
            label = f"{kind_name(target.get('kind'))} {target.get('name', '?')}"
            where = location_of({"uri": target.get("uri"), "range": target.get("selectionRange")})
            said = "defined where the answer does not say"
            if where is not None:
                hit = await place_hit(ctx, shown, *where)
                said = f"{hit.rel}:{hit.line + 1}" if hit else "defined in a file you may not read"
            callee = callees.setdefault((label, said), _Callee(label, said))
            for rng in call.get("fromRanges") or []:
                start = rng.get("start") if isinstance(rng, dict) else None
                line = start.get("line") if isinstance(start, dict) else None
                if isinstance(line, int) and line >= 0:
                    callee.lines.add(line)
        if not callees:
            return ToolResult(f"{head}: none.{shown.note()}")
        lines = await shown.lines(at.path) or []
        ordered = sorted(callees.values(), key=lambda c: (min(c.lines, default=1 << 30), c.label))
        out = [f"{head}: {plural(len(ordered), 'callee')}"]
        for callee in ordered[:MAX_HITS]:
            out.append(f"{callee.label} ({callee.where})")
            for line in sorted(callee.lines):
                text = lines[line].strip() if line < len(lines) else ""
                if len(text) > MAX_CONTEXT_CHARS:
                    text = text[:MAX_CONTEXT_CHARS] + "…"
                out.append(f"  {line + 1}: {text}".rstrip())
        if len(ordered) > MAX_HITS:
            out.append(f"... {len(ordered) - MAX_HITS} more callees; read the function instead.")
        return ToolResult("\n".join(out) + shown.note(), title=self.title(input_dict(params)))
