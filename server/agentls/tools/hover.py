"""hover: a symbol's type, signature and documentation, from the language server; withheld when
it is defined in a file the model may not read."""

from __future__ import annotations

import sys
from pathlib import Path

from agentls.language.render import hover_text
from agentls.tools.base import (
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
    input_dict,
)
from agentls.tools.support.lookup import (
    AtSymbol,
    SymbolInput,
    as_list,
    ask,
    ask_if_offered,
    locate,
    location_of,
)


class HoverTool(AtSymbol):
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
            if where is not None and not (ctx.may_show(where[0]) or library_file(ctx, where[0])):
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


def library_file(ctx: ToolContext, path: Path) -> bool:
    """An installed library's file outside the workspace (its docs are no secret)."""
    if not ctx.is_outside(path):
        return False
    stdlib = {Path(sys.base_prefix, "lib"), Path(sys.prefix, "lib")}
    return bool(
        _LIBRARY_DIRS.intersection(path.parts)
        or path.name.endswith(_STUBS)
        or stdlib.intersection(path.parents)
    )
