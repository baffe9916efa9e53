"""What implementation, type_definition and callees share: the places an answer names, each shown
when the read rules let the model see its file, or when it is an installed library's (a type
from the standard library's stubs, a base class in site-packages: no secret, and where the
answer usually is); and the tool whose whole answer is those places (GotoTool)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.language.render import Hit
from agentls.tools.base import ToolContext, ToolInput, ToolResult, expect_input, input_dict
from agentls.tools.hover import library_file
from agentls.tools.support.lookup import (
    AtSymbol,
    Shown,
    SymbolInput,
    as_list,
    ask,
    locate,
    location_of,
)


async def place_hit(
    ctx: ToolContext, shown: Shown, path: Path, line: int, label: str | None = None
) -> Hit | None:
    """The place as a hit: a workspace file the model may read (its path relative), an installed
    library's file (its full path); None, counted as left out, for any other file."""
    if library_file(ctx, path):
        return Hit(str(path), line, await shown.line(path, line), label)
    return await shown.hit(path, line, label)


async def place_hits(ctx: ToolContext, shown: Shown, items: list[Any]) -> list[Hit]:
    """Every Location or LocationLink of an answer as a hit (place_hit), in the answer's order."""
    hits: list[Hit] = []
    for item in items:
        where = location_of(item)
        if where is None:
            continue
        hit = await place_hit(ctx, shown, *where)
        if hit is not None:
            hits.append(hit)
    return hits


class GotoTool(AtSymbol):
    """A language tool answered by places (implementation, type_definition): its
    `language_method` asked about the symbol at {path, symbol, line?}, every Location it answers
    shown as a hit (place_hits), the answer worded by `answer`."""

    language_method: str

    def answer(self, symbol: str, hits: list[Hit]) -> str:
        """The answer's text (`symbol`: where the symbol was found, in words; `hits` maybe none)."""
        raise NotImplementedError

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, SymbolInput)
        at = await locate(ctx, self.name, params, verb=self.verb)
        shown = Shown(ctx)
        answer = await ask(ctx, self.language_method, at.params(), at.path)
        hits = await place_hits(ctx, shown, as_list(answer))
        text = self.answer(at.position.note, hits) + shown.note()
        return ToolResult(text, title=self.title(input_dict(params)) if hits else None)
