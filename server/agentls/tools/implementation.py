"""implementation: the classes and methods that implement an abstract method, a protocol or a
base class's method, from the language server (textDocument/implementation)."""

from __future__ import annotations

from agentls.language.render import plural, render_hits
from agentls.tools.base import ToolContext, ToolInput, ToolResult, expect_input, input_dict
from agentls.tools.support.goto import place_hits
from agentls.tools.support.lookup import INSTEAD, AtSymbol, Shown, SymbolInput, as_list, ask, locate

METHOD = "textDocument/implementation"


class ImplementationTool(AtSymbol):
    name = "implementation"
    description = (
        "Find the implementations of an abstract method, an interface or protocol, or a base "
        "class's method with the language server (the overrides in subclasses): give the file, "
        "its name and about which line. Returns each implementation's place with its line."
        + INSTEAD
    )
    verb = "Find the implementations of"
    # Offered only where a language server answers it (session/offer.py).
    language_method = METHOD

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, SymbolInput)
        at = await locate(ctx, self.name, params, verb=self.verb)
        shown = Shown(ctx)
        hits = await place_hits(ctx, shown, as_list(await ask(ctx, METHOD, at.params(), at.path)))
        head = f"Implementations of {at.position.note}: {plural(len(hits), 'place')}"
        if not hits:
            return ToolResult(head + "." + shown.note())
        files = len({h.rel for h in hits})
        return ToolResult(
            f"{head} in {plural(files, 'file')}:\n{render_hits(hits)}{shown.note()}",
            title=self.title(input_dict(params)),
        )
