"""rename: the language server's rename of a symbol across files, asked about once (the combined
diff, every file's old and new text) under the edit rules of every file it touches, and applied
as one edit to all of them (Workspace.write_all: all or none). The user may accept part of it
(some files or hunks, or their own version): that is written, and the model told what differs."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.language.edits import UnsupportedEdit, apply_text_edits, edits_by_file
from agentls.language.render import plural
from agentls.tools.base import (
    Accepted,
    PermissionQuery,
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
    input_dict,
)
from agentls.tools.support.file_writes import (
    check_new_size,
    current_text,
    is_large,
    outcome_lines,
    user_changed,
)
from agentls.tools.support.lookup import Located, SymbolInput, ask, ask_if_offered, locate
from agentls.tools.support.text import unified_diff
from agentls.workspace.protocol import FileChange

_NAME = re.compile(r"[^\s\"'`()\[\]{},;:]+")


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
        path = ctx.resolve_path(params.path, tool=self.name)
        if not ctx.ledger.has_read(path):
            rel = ctx.relative(path)
            raise ToolError(f"You have not read {rel} in this session. Read it first, then rename.")
        # The file was read (so reading it was allowed): rename's own question comes below.
        at, by_file = await _workspace_edit(ctx, self.name, params, new_name)
        changes, diffs, counts, unread, notes = await self._changes(ctx, by_file, new_name)
        if unread:
            raise ToolError(
                f"The rename changes {plural(len(unread), 'file')} you have not read in this "
                f"session: {', '.join(unread)}. Read them first, then rename again. Nothing was "
                "changed."
            )
        if not changes:
            return ToolResult(f"Nothing to change: renaming {at.position.note} edits no text.")
        title = f"Rename {params.symbol} to {new_name} ({plural(len(changes), 'file')})"
        accepted = await ctx.authorize(
            PermissionQuery(
                tool=self.name,
                subject=at.rel,
                title=title,
                input=input_dict(params),
                diff="".join(diffs),
                outside_workspace=any(ctx.is_outside(c.path) for c in changes),
                changes=changes,
            )
        )
        changed: list[str] = []
        if accepted is not None:  # the user took some files' hunks, or their own version
            changes, counts, changed = _as_accepted(ctx, changes, accepted, new_name)
        outcomes = await ctx.workspace.write_all(changes)
        failed = [
            f"{ctx.relative(c.path)}: {o.reason or 'not applied'}"
            for c, o in zip(changes, outcomes, strict=True)
            if not o.applied
        ]
        if failed:
            raise ToolError("Not renamed (no file was changed): " + "; ".join(failed))
        lines = [
            *changed,
            f"Renamed {at.position.note} to `{new_name}`: {plural(sum(counts.values()), 'place')} "
            f"in {plural(len(changes), 'file')}.",
        ]
        for change, outcome in zip(changes, outcomes, strict=True):
            rel = ctx.relative(change.path)
            lines.append(f"  {rel} ({plural(counts[change.path], 'place')})")
            if change.path not in notes:
                ctx.ledger.record(change.path, change.new_text)
            lines.extend(f"    {line}" for line in outcome_lines(outcome))
        lines.extend(notes.values())
        return ToolResult("\n".join(lines), title=title)

    async def _changes(
        self, ctx: ToolContext, by_file: dict[Path, list[dict[str, Any]]], new_name: str
    ) -> tuple[list[FileChange], list[str], dict[Path, int], list[str], dict[Path, str]]:
        """Each file's new text and diff, how many edits each, the files not read yet, and a
        note for each file that changed since it was read."""
        changes: list[FileChange] = []
        diffs: list[str] = []
        counts: dict[Path, int] = {}
        unread: list[str] = []
        notes: dict[Path, str] = {}
        for raw_path, edits in by_file.items():
            path = Path(os.path.realpath(raw_path))
            rel = ctx.relative(path)
            current = await current_text(ctx, path, rel)
            if current is None:
                raise ToolError(f"Not renamed: the rename edits {rel}, which does not exist.")
            if not ctx.ledger.has_read(path):
                unread.append(rel)
                continue
            try:
                new_text = apply_text_edits(current, edits)
            except UnsupportedEdit as exc:
                raise ToolError(f"Not renamed: {rel}: {exc}.") from None
            if new_text == current:
                continue
            check_new_size(new_text, rel)
            if not is_large(current) and ctx.ledger.changed_since_read(path, current):
                notes[path] = (
                    f"Note: {rel} had changed since you last read it; re-read it if other parts "
                    "of it matter to you."
                )
            changes.append(FileChange(path=path, new_text=new_text, old_text=current))
            diffs.append(unified_diff(current, new_text, rel))
            counts[path] = max(_uses(new_text, new_name) - _uses(current, new_name), 1)
        return changes, diffs, counts, unread, notes


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


def _as_accepted(
    ctx: ToolContext, changes: list[FileChange], accepted: Accepted, new_name: str
) -> tuple[list[FileChange], dict[Path, int], list[str]]:
    """The changes as the user accepted them (some files' hunks, or their own version): the
    files' new texts, the places renamed in each, and what the user changed, for the model."""
    changed = user_changed(
        [
            (ctx.relative(c.path), c.new_text, accepted.texts.get(c.path, c.old_text or ""))
            for c in changes
        ],
        accepted.note,
    )
    changes = [
        FileChange(path=c.path, new_text=accepted.texts[c.path], old_text=c.old_text)
        for c in changes
        if c.path in accepted.texts
    ]
    for change in changes:
        check_new_size(change.new_text, ctx.relative(change.path))
    counts = {
        c.path: max(_uses(c.new_text, new_name) - _uses(c.old_text or "", new_name), 0)
        for c in changes
    }
    return changes, counts, changed
