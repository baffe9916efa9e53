"""What rename and apply_code_action share: the call's file read first; a language server's edits
across files (its WorkspaceEdits' text edits by file) made one proposed change, asked about once
(the combined diff) under the edit rules of every file it touches, and written to all of them or
none (Workspace.write_all), as the user accepted it (some files' hunks, or their own version)."""

from __future__ import annotations

import os
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.language.edits import UnsupportedEdit, apply_text_edits
from agentls.language.render import plural
from agentls.tools.base import PermissionQuery, ToolContext, ToolError, input_dict
from agentls.tools.support.file_writes import (
    check_new_size,
    current_text,
    outcome_lines,
    user_changed,
)
from agentls.tools.support.text import unified_diff
from agentls.workspace.protocol import EditOutcome, FileChange


def check_read_first(ctx: ToolContext, tool: str, raw_path: str, then: str) -> None:
    """Refuse unless the model read the call's file in this session (so reading it was allowed:
    the change's own question comes later); `then` is what to do after reading it."""
    path = ctx.resolve_path(raw_path, tool=tool)
    if not ctx.ledger.has_read(path):
        raise ToolError(
            f"You have not read {ctx.relative(path)} in this session. Read it first, then {then}."
        )


@dataclass(frozen=True)
class Wording:
    """How a tool's refusals name it: `refused` starts them ("Not renamed"), `what` is the change
    ("the rename", the action's title) and `again` how to retry ("rename again")."""

    refused: str
    what: str
    again: str


@dataclass
class Proposal:
    """The change every file gets (old and new text), each file's diff, and how the tool words
    its refusals."""

    changes: list[FileChange]
    diffs: list[str]
    wording: Wording

    async def write(
        self, ctx: ToolContext, *, tool: str, params: Any, subject: str, title: str
    ) -> WrittenAll:
        """Ask once about every file's change (the combined diff), then write what the user
        accepted to all of those files or none."""
        changes = self.changes
        accepted = await ctx.authorize(
            PermissionQuery(
                tool=tool,
                subject=subject,
                title=title,
                input=input_dict(params),
                diff="".join(self.diffs),
                outside_workspace=any(ctx.is_outside(c.path) for c in changes),
                changes=changes,
            )
        )
        changed: list[str] = []
        if accepted is not None:  # the user took some files' hunks, or their own version
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
        outcomes = await ctx.workspace.write_all(changes)
        failed = [
            f"{ctx.relative(c.path)}: {o.reason or 'not applied'}"
            for c, o in zip(changes, outcomes, strict=True)
            if not o.applied
        ]
        if failed:
            raise ToolError(f"{self.wording.refused} (no file was changed): " + "; ".join(failed))
        return WrittenAll(changes, outcomes, changed)


async def propose(
    ctx: ToolContext, edits: list[dict[Path, list[dict[str, Any]]]], wording: Wording
) -> Proposal:
    """Each changed file's old and new text (the edits applied in order; a file named twice, by
    two paths to it, is one change), and its diff. Refused, nothing changed: an edit of a file
    that does not exist, one that cannot be applied, a file not read in this session."""
    old: dict[Path, str] = {}
    new: dict[Path, str] = {}
    unread: list[str] = []
    for by_file in edits:
        for raw_path, file_edits in by_file.items():
            path = Path(os.path.realpath(raw_path))
            rel = ctx.relative(path)
            if path not in old:
                current = await current_text(ctx, path, rel)
                if current is None:
                    raise ToolError(
                        f"{wording.refused}: {wording.what} edits {rel}, which does not exist. "
                        "Nothing was changed."
                    )
                if not ctx.ledger.has_read(path):
                    unread.append(rel)
                old[path] = new[path] = current
            try:
                new[path] = apply_text_edits(new[path], file_edits)
            except UnsupportedEdit as exc:
                raise ToolError(f"{wording.refused}: {rel}: {exc}. Nothing was changed.") from None
    if unread:
        what = wording.what[:1].upper() + wording.what[1:]
        raise ToolError(
            f"{what} changes {plural(len(unread), 'file')} you have not read in this session: "
            f"{', '.join(unread)}. Read them first, then {wording.again}. Nothing was changed."
        )
    changes: list[FileChange] = []
    diffs: list[str] = []
    for path, text in new.items():
        if text == old[path]:
            continue
        check_new_size(text, ctx.relative(path))
        changes.append(FileChange(path=path, new_text=text, old_text=old[path]))
        diffs.append(unified_diff(old[path], text, ctx.relative(path)))
    return Proposal(changes, diffs, wording)


@dataclass
class WrittenAll:
    """The changes as they were written (the proposal, or what the user accepted instead), each
    file's outcome, and when the user changed the proposal, the lines that tell the model so."""

    changes: list[FileChange]
    outcomes: list[EditOutcome]
    changed: list[str] = field(default_factory=list)

    @property
    def as_proposed(self) -> bool:
        return not self.changed

    def report(
        self,
        ctx: ToolContext,
        head: str,
        label: Callable[[Path], str] = lambda _: "",
        unrecorded: Container[Path] = (),
    ) -> list[str]:
        """The result's lines: what the user changed, `head`, then each file written (with its
        `label`) and its outcome's notes and diagnostics. Each file's new text is recorded as
        read, but for those `unrecorded`."""
        lines = [*self.changed, head]
        for change, outcome in zip(self.changes, self.outcomes, strict=True):
            lines.append(f"  {ctx.relative(change.path)}{label(change.path)}")
            if change.path not in unrecorded:
                ctx.ledger.record(change.path, change.new_text)
            lines.extend(f"    {line}" for line in outcome_lines(outcome))
        return lines
