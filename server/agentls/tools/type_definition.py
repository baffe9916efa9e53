"""type_definition: where the type of a variable, parameter or expression is defined, from the
language server (textDocument/typeDefinition)."""

from __future__ import annotations

from agentls.language.render import Hit, render_hits
from agentls.tools.support.goto import GotoTool
from agentls.tools.support.lookup import INSTEAD


class TypeDefinitionTool(GotoTool):
    name = "type_definition"
    description = (
        "Go to the definition of the TYPE of a variable, parameter or attribute with the language "
        "server (where `definition` goes to the variable itself): give the file, the name and "
        "about which line. Returns where its type (class, alias, protocol) is defined, with the "
        "line; an installed library's type is shown with its file's full path." + INSTEAD
    )
    verb = "Find the type of"
    # Offered only where a language server answers it (session/offer.py).
    language_method = "textDocument/typeDefinition"

    def answer(self, symbol: str, hits: list[Hit]) -> str:
        return f"Type definition of {symbol}:\n" + (render_hits(hits) if hits else "none found.")
