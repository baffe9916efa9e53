"""implementation: the classes and methods that implement an abstract method, a protocol or a
base class's method, from the language server (textDocument/implementation)."""

from __future__ import annotations

from agentls.language.render import Hit, plural, render_hits
from agentls.tools.support.goto import GotoTool
from agentls.tools.support.lookup import INSTEAD


class ImplementationTool(GotoTool):
    name = "implementation"
    description = (
        "Find the implementations of an abstract method, an interface or protocol, or a base "
        "class's method with the language server (the overrides in subclasses): give the file, "
        "its name and about which line. Returns each implementation's place with its line."
        + INSTEAD
    )
    verb = "Find the implementations of"
    # Offered only where a language server answers it (session/offer.py).
    language_method = "textDocument/implementation"

    def answer(self, symbol: str, hits: list[Hit]) -> str:
        head = f"Implementations of {symbol}: {plural(len(hits), 'place')}"
        if not hits:
            return head + "."
        return f"{head} in {plural(len({h.rel for h in hits}), 'file')}:\n{render_hits(hits)}"
