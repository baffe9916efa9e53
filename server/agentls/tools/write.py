"""write: create a file, or replace an existing file's whole text."""

from __future__ import annotations

from pydantic import Field

from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult, expect_input
from agentls.tools.support.file_writes import (
    authorize_and_write,
    check_new_size,
    current_text,
    is_large,
    outcome_lines,
)
from agentls.tools.support.text import line_count, plural, to_crlf, uses_crlf
from agentls.workspace.hunks import unified_diff
from agentls.workspace.merge import merge


class WriteInput(ToolInput):
    path: str = Field(description="The file to write: relative to the workspace root, or absolute.")
    content: str = Field(description="The complete new text of the file.")


def merged_since_read(read: str | None, current: str, content: str, rel: str) -> str:
    """The whole-file content the model wrote from the text it `read`, merged into the file's
    text now (workspace/merge.py): what the user changed since on other lines is kept; ToolError
    when the read text is not kept or the same lines changed."""
    merged = merge(read, current, content) if read is not None else None
    if merged is None or merged.text is None:
        where = f" on {merged.where()}, lines your content changes too" if merged else ""
        raise ToolError(
            f"{rel} has changed since you last read it (the user or another tool modified "
            f"it){where}. Read it again and redo your change on the current content; nothing was "
            "written."
        )
    return merged.text


class WriteTool(Tool):
    name = "write"
    description = (
        "Create a new file, or replace the entire text of an existing one. Missing parent "
        "directories are created. Overwriting an existing file requires that you read it earlier "
        "in this session and that it has not changed since; to change part of a file prefer edit, "
        "which sends only the change. The content is written exactly as given (end it with a "
        "newline if the file should have one); an existing file's CRLF line endings are kept."
    )
    input_model = WriteInput

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, WriteInput)
        path = ctx.resolve_path(params.path, tool=self.name)
        rel = ctx.relative(path)
        if path.is_dir():
            raise ToolError(f"{rel} is a directory; give the path of a file to write.")
        check_new_size(params.content, rel)  # before the current text is read
        current = await current_text(ctx, path, rel)
        content = params.content
        notes: list[str] = []
        if current is not None:
            if not ctx.ledger.has_read(path):
                raise ToolError(
                    f"{rel} already exists and you have not read it in this session. Read it first "
                    "(read tool), then write it; or use edit to change part of it."
                )
            if not is_large(current) and ctx.ledger.changed_since_read(path, current):
                content = merged_since_read(ctx.ledger.text_read(path), current, content, rel)
                kept = unified_diff(params.content, content, f"{rel} (yours)", f"{rel} (merged)")
                notes.append(
                    f"{rel} had changed since you last read it (the user or another tool edited "
                    "other lines): your content was merged into it, their lines kept, as this "
                    f"diff shows (yours -> merged).\n{kept.rstrip()}"
                )
            if uses_crlf(current) and "\n" in content and "\r\n" not in content:
                content = to_crlf(content)
                notes.append("The file uses CRLF line endings; they were kept.")
            if content == current:
                ctx.ledger.record(path, current)
                return ToolResult(
                    f"{rel} already has exactly this content; nothing was written.",
                    title=f"Write {rel}",
                    metadata={"path": rel, "unchanged": True},
                )

        verb = "Create" if current is None else "Overwrite"
        written = await authorize_and_write(
            ctx,
            tool=self.name,
            params=params,
            path=path,
            rel=rel,
            verb=verb,
            current=current,
            new_text=content,
            not_done="was not written",
            refusal="the workspace refused the change",
        )
        ctx.ledger.record(path, written.text)
        lines = line_count(written.text)
        done = "Created" if current is None else "Overwrote"
        summary = f"{done} {rel} ({plural(lines, 'line')})."
        output = "\n".join([*written.changed, summary, *notes, *outcome_lines(written.outcome)])
        return ToolResult(
            output,
            title=f"{verb} {rel}",
            metadata={"path": rel, "created": current is None, "lines": lines},
        )
