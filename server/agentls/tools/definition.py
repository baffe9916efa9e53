"""definition: where a symbol is defined, from the language server."""

from __future__ import annotations

from agentls.language.render import render_hits
from agentls.tools.base import (
    ToolContext,
    ToolInput,
    ToolResult,
    expect_input,
    input_dict,
)
from agentls.tools.support.lookup import (
    INSTEAD,
    AtSymbol,
    Shown,
    SymbolInput,
    as_list,
    ask,
    hits_of,
    locate,
)


class DefinitionTool(AtSymbol):
    name = "definition"
    description = (
        "Go to the definition of a symbol with the language server: give the file it is used "
        "in, its name, and about which line. Returns where it is defined, with the line." + INSTEAD
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
