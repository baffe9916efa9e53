"""The file-write path shared by edit and write: size limits, the current text, asking with the
diff, applying through the workspace, and the outcome's lines for the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.tools.base import PermissionQuery, ToolContext, ToolError, input_dict
from agentls.tools.support.text import human_size, unified_diff
from agentls.verify.reach import describe_reach
from agentls.workspace import hunks
from agentls.workspace.protocol import EditOutcome

# Files bigger than this are paged straight from disk by `read` (never loaded whole); write and
# edit cannot verify such files against the ledger (read records only the page it showed).
LARGE_FILE_BYTES = 4 * 1024 * 1024

# edit and write refuse files bigger than this: a change holds the old and the new text, their
# diff and their bytes at once (about four times the file), and a model has no business rewriting
# such a file through a tool call anyway.
MAX_EDIT_BYTES = 32 * 1024 * 1024


def check_new_size(text: str, rel: str) -> None:
    """Refuse a new text over MAX_EDIT_BYTES, the limit a changed file has: write and edit create
    no file they could not change afterwards."""
    # A character is at most 4 bytes of UTF-8: most texts are told apart without encoding them.
    if len(text) * 4 <= MAX_EDIT_BYTES:
        return
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_EDIT_BYTES:
        raise ToolError(
            f"The new text of {rel} would be {human_size(size)}, over this tool's limit of "
            f"{human_size(MAX_EDIT_BYTES)}; nothing was written. Write a file that big with bash "
            "(a script that generates it), or split it into smaller files."
        )


async def current_text(ctx: ToolContext, path: Path, rel: str) -> str | None:
    """The file's current text as the workspace sees it, or None when it does not exist."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    if size > MAX_EDIT_BYTES:
        raise ToolError(
            f"{rel} is {human_size(size)}, too large to change with this tool (the limit is "
            f"{human_size(MAX_EDIT_BYTES)}). Use bash (sed, a script) for a targeted change."
        )
    try:
        return await ctx.workspace.read_text(path)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolError(f"{rel} is a directory, not a file.") from None
    except UnicodeDecodeError:
        raise ToolError(
            f"{rel} is a binary (non-UTF-8) file; this tool only changes text files. "
            "Use bash if you really need to replace it."
        ) from None


@dataclass
class Written:
    """A change as it was written: the workspace's outcome, the text written (the proposal, or
    what the user accepted instead), and when the user changed the proposal, the lines that tell
    the model so (first in the tool result)."""

    outcome: EditOutcome
    text: str
    changed: list[str] = field(default_factory=list)


async def authorize_and_write(
    ctx: ToolContext,
    *,
    tool: str,
    params: Any,
    path: Path,
    rel: str,
    verb: str,
    current: str | None,
    new_text: str,
    not_done: str,
    refusal: str,
) -> Written:
    """The shared end of edit and write: ask (with the diff and the proposed text), then apply
    through the workspace what the user accepted (the proposal, part of it, or their version of
    it); `not_done` and `refusal` word the error when it is not applied."""
    check_new_size(new_text, rel)
    accepted = await ctx.authorize(
        PermissionQuery(
            tool=tool,
            subject=rel,
            title=f"{verb} {rel}",
            input=input_dict(params),
            diff=unified_diff(current, new_text, rel),
            path=path,
            outside_workspace=ctx.is_outside(path),
            old_text=current,
            new_text=new_text,
        )
    )
    text, changed = new_text, []
    if accepted is not None:
        text = accepted.texts.get(path, current if current is not None else "")
        check_new_size(text, rel)
        changed = user_changed([(rel, new_text, text)], accepted.note)
    outcome = await ctx.workspace.write_text(path, text, current)
    if not outcome.applied:
        raise ToolError(f"{rel} {not_done}: {outcome.reason or refusal}.")
    if outcome.merged is not None:  # the user changed other lines meanwhile: merged, kept
        changed = [*changed, *merged_lines(rel, text, outcome.merged)]
        text = outcome.merged
    if outcome.reach is not None:  # other files' new errors: only those the model may read
        reach = describe_reach(outcome.reach, ctx.relative, ctx.may_show)
        outcome.diagnostics = f"{outcome.diagnostics}\n{reach}" if outcome.diagnostics else reach
    return Written(outcome, text, changed)


def user_changed(files: list[tuple[str, str, str]], note: str | None) -> list[str]:
    """What the model is told when the user accepted something else than its proposal: the
    unified diff from proposed to accepted of each (name, proposed, accepted) file, and their
    note."""
    lines = [
        "The user changed your proposal before accepting it: what was written differs from "
        "what you proposed as this diff shows (proposed -> accepted). Take it as the file's "
        "content now."
    ]
    for rel, proposed, accepted in files:
        diff = hunks.unified_diff(proposed, accepted, f"{rel} (proposed)", f"{rel} (accepted)")
        if diff:
            lines.append(diff.rstrip("\n"))
    if note:
        lines.append(f"Their note: {note}")
    return lines


def merged_lines(rel: str, proposed: str, written: str) -> list[str]:
    """What the model is told when its change was merged into the user's typing: the diff from
    the change to what was written."""
    diff = hunks.unified_diff(proposed, written, f"{rel} (your change)", f"{rel} (written)")
    return [
        f"The user edited other lines of {rel} while your change waited: your change was merged "
        "into their text (their lines kept, yours applied), so what was written differs from "
        "your change as this diff shows. Take it as the file's content now.",
        diff.rstrip("\n"),
    ]


def is_large(text: str) -> bool:
    """Texts this big were paged by read, so the ledger holds only a page of them."""
    return (
        len(text) > LARGE_FILE_BYTES // 4
        and len(text.encode("utf-8", "surrogatepass")) > LARGE_FILE_BYTES
    )


def outcome_lines(outcome: EditOutcome) -> list[str]:
    lines = [f"Note: {note}" for note in outcome.notes]
    if outcome.diagnostics:
        lines.append(outcome.diagnostics.rstrip())
    return lines
