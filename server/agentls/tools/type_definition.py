"""type_definition: where the type of a variable, parameter or expression is defined, from the
language server (textDocument/typeDefinition)."""

from __future__ import annotations

from agentls.language.render import render_hits
from agentls.tools.base import ToolContext, ToolInput, ToolResult, expect_input, input_dict
from agentls.tools.support.goto import place_hits
from agentls.tools.support.lookup import INSTEAD, AtSymbol, Shown, SymbolInput, as_list, ask, locate

METHOD = "textDocument/typeDefinition"


class TypeDefinitionTool(AtSymbol):
    name = "type_definition"
    description = (
        "Go to the definition of the TYPE of a variable, parameter or attribute with the language "
        "server (where `definition` goes to the variable itself): give the file, the name and "
        "about which line. Returns where its type (class, alias, protocol) is defined, with the "
        "line; an installed library's type is shown with its file's full path." + INSTEAD
    )
    verb = "Find the type of"
    # Offered only where a language server answers it (session/offer.py).
    language_method = METHOD

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, SymbolInput)
        at = await locate(ctx, self.name, params, verb=self.verb)
        shown = Shown(ctx)
        hits = await place_hits(ctx, shown, as_list(await ask(ctx, METHOD, at.params(), at.path)))
        head = f"Type definition of {at.position.note}:\n"
        if not hits:
            return ToolResult(head + "none found." + shown.note())
        return ToolResult(
            head + render_hits(hits) + shown.note(), title=self.title(input_dict(params))
        )
