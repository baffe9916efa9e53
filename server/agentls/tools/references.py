"""references: every use of a symbol across the workspace, from the language server."""

from __future__ import annotations

from agentls.language.render import plural
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
    PlacesInput,
    Shown,
    as_list,
    ask,
    hits_of,
    locate,
    only_included,
    places_text,
)


class ReferencesTool(AtSymbol):
    name = "references"
    description = (
        "Find every use of a symbol across the workspace with the language server (its "
        "definition included): give the file it is defined or used in, its name, and about which "
        "line. Returns every file with its count, then the places grouped by file, one line of "
        "context each; `include` (a glob) keeps the places in some files only." + INSTEAD
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
