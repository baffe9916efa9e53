"""The file-write path shared by edit and write: size limits, the current text, asking with the
diff, applying through the workspace, and the outcome's lines for the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.tools.base import PermissionQuery, ToolContext, ToolError, input_dict
from agentls.tools.text import human_size, unified_diff
from agentls.verify.reach import describe_reach
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
) -> EditOutcome:
    """The shared end of edit and write: ask (with the diff and the proposed text), then apply
    through the workspace; `not_done` and `refusal` word the error when it is not applied."""
    check_new_size(new_text, rel)
    await ctx.authorize(
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
    outcome = await ctx.workspace.write_text(path, new_text, current)
    if not outcome.applied:
        raise ToolError(f"{rel} {not_done}: {outcome.reason or refusal}.")
    if outcome.reach is not None:  # other files' new errors: only those the model may read
        reach = describe_reach(outcome.reach, ctx.relative, ctx.may_show)
        outcome.diagnostics = f"{outcome.diagnostics}\n{reach}" if outcome.diagnostics else reach
    return outcome


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
