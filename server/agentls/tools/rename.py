"""rename: the language server's rename of a symbol across files, asked about once (the combined
diff, every file's old and new text) under the edit rules of every file it touches, and applied
as one edit to all of them (Workspace.write_all: all or none). The user may accept part of it
(some files or hunks, or their own version): that is written, and the model told what differs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.language.edits import UnsupportedEdit, edits_by_file
from agentls.language.render import plural
from agentls.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
)
from agentls.tools.support.file_writes import is_large
from agentls.tools.support.lookup import Located, SymbolInput, ask, ask_if_offered, locate
from agentls.tools.support.workspace_edits import (
    Wording,
    check_read_first,
    propose,
)

_NAME = re.compile(r"[^\s\"'`()\[\]{},;:]+")


_WORDING = Wording(refused="Not renamed", what="the rename", again="rename again")


def _uses(text: str, name: str) -> int:
    return len(re.findall(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])", text))


class RenameInput(SymbolInput):
    new_name: str = Field(description="The new name.")


class RenameTool(Tool):
    name = "rename"
    description = (
        "Rename a symbol (function, class, method, variable) everywhere it is used, with the "
        "language server's rename: give the file it is defined or used in, its name, about which "
        "line, and the new name. The change across every file is proposed for approval as one "
        "edit and applied at once. Read each file it changes first (the result lists any you have "
        "not read). Prefer it over edit or sed for renames: it changes only real uses, not "
        "comments, strings or namesakes."
    )
    input_model = RenameInput

    def title(self, raw: dict[str, object]) -> str:
        symbol, new = raw.get("symbol"), raw.get("new_name")
        if isinstance(symbol, str) and isinstance(new, str):
            return f"rename {symbol} to {new}"
        return self.name

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, RenameInput)
        new_name = params.new_name.strip()
        if not _NAME.fullmatch(new_name):
            raise ToolError(f"new_name {params.new_name!r} is not a name; give a single word.")
        check_read_first(ctx, self.name, params.path, "rename")
        at, by_file = await _workspace_edit(ctx, self.name, params, new_name)
        proposal = await propose(ctx, [by_file], _WORDING)
        if not proposal.changes:
            return ToolResult(f"Nothing to change: renaming {at.position.note} edits no text.")
        # A file changed since it was read: the model's picture of its other lines is stale.
        stale = {
            c.path: f"Note: {ctx.relative(c.path)} had changed since you last read it; re-read "
            "it if other parts of it matter to you."
            for c in proposal.changes
            if not is_large(c.old_text or "")
            and ctx.ledger.changed_since_read(c.path, c.old_text or "")
        }
        title = f"Rename {params.symbol} to {new_name} ({plural(len(proposal.changes), 'file')})"
        written = await proposal.write(
            ctx, tool=self.name, params=params, subject=at.rel, title=title
        )
        floor = 1 if written.as_proposed else 0
        counts = {
            c.path: max(_uses(c.new_text, new_name) - _uses(c.old_text or "", new_name), floor)
            for c in written.changes
        }
        head = (
            f"Renamed {at.position.note} to `{new_name}`: {plural(sum(counts.values()), 'place')} "
            f"in {plural(len(written.changes), 'file')}."
        )
        lines = written.report(
            ctx, head, lambda path: f" ({plural(counts[path], 'place')})", unrecorded=stale
        )
        lines.extend(stale.values())
        return ToolResult("\n".join(lines), title=title)


async def _workspace_edit(
    ctx: ToolContext, tool: str, params: RenameInput, new_name: str
) -> tuple[Located, dict[Path, list[dict[str, Any]]]]:
    """The symbol's place, and the language server's rename of it as text edits by file."""
    at = await locate(ctx, tool, params, verb="Rename", authorize=False)
    offered, prepared = await ask_if_offered(
        ctx, "textDocument/prepareRename", at.params(), at.path
    )
    if offered and prepared is None:
        raise ToolError(f"The language server cannot rename {at.position.note}.")
    request = {**at.params(), "newName": new_name}
    edit = await ask(ctx, "textDocument/rename", request, at.path)
    if edit is None:
        raise ToolError(f"The language server found nothing to rename at {at.position.note}.")
    try:
        return at, edits_by_file(edit)
    except UnsupportedEdit as exc:
        raise ToolError(f"Not renamed: {exc}.") from None
