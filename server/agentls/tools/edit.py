"""edit: replace an exact string in a file (once, or everywhere with replace_all)."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from pydantic import Field

from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput, ToolResult, expect_input
from agentls.tools.read import cut_line, missing_file_error
from agentls.tools.support.file_writes import (
    authorize_and_write,
    current_text,
    is_large,
    outcome_lines,
)
from agentls.tools.support.text import display_lines, number_lines, plural, to_crlf, uses_crlf
from agentls.workspace.hunks import hunks

_SNIPPET_CONTEXT = 3
_SNIPPET_MAX_LINES = 40
_HINT_MAX_FILE_LINES = 50_000
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t")


class EditInput(ToolInput):
    path: str = Field(description="The file to edit: relative to the workspace root, or absolute.")
    old_string: str = Field(
        description="The exact text to replace, including whitespace and indentation, without "
        "read's line-number prefixes. Empty only to create a new file."
    )
    new_string: str = Field(
        description="The text to put in its place (must differ from old_string)."
    )
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of requiring exactly one."
    )


def _normalise(line: str) -> str:
    return " ".join(line.split())


def _nonblank_edges(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _snippet(lines: list[str], first: int, last: int, context: int = 2) -> str:
    """Lines first..last (0-based, inclusive) with context, numbered from 1."""
    lo = max(0, first - context)
    hi = min(len(lines), last + context + 1)
    if hi - lo > _SNIPPET_MAX_LINES:
        hi = lo + _SNIPPET_MAX_LINES
    return number_lines([cut_line(line) for line in lines[lo:hi]], lo + 1)


def _whitespace_match(file_lines: list[str], old: str) -> tuple[int, int] | None:
    """Where old_string matches when whitespace and indentation are ignored (line range)."""
    needle = [_normalise(line) for line in _nonblank_edges(old.replace("\r\n", "\n").split("\n"))]
    if not needle or len(file_lines) > _HINT_MAX_FILE_LINES:
        return None
    hay = [_normalise(line) for line in file_lines]
    k = len(needle)
    for i in range(len(hay) - k + 1):
        if k == 1:
            if needle[0] and needle[0] in hay[i]:
                return i, i
            continue
        if not hay[i].endswith(needle[0]) or not hay[i + k - 1].startswith(needle[-1]):
            continue
        if hay[i + 1 : i + k - 1] == needle[1:-1]:
            return i, i + k - 1
    return None


def _closest(file_lines: list[str], old: str) -> tuple[int, int] | None:
    """The region of the file most like old_string, when something is reasonably close."""
    old_lines = _nonblank_edges(old.replace("\r\n", "\n").split("\n"))
    if not old_lines or len(file_lines) > _HINT_MAX_FILE_LINES:
        return None
    k = len(old_lines)
    # Candidates: lines most like old_string's first line (cheap upper bounds first) ...
    first = difflib.SequenceMatcher(autojunk=False)
    first.set_seq2(old_lines[0].strip())
    scored: list[tuple[float, int]] = []
    for i, line in enumerate(file_lines):
        if not line.strip():
            continue
        first.set_seq1(line.strip())
        scored.append((first.quick_ratio(), i))
    scored.sort(key=lambda item: (-item[0], item[1]))
    # ... then the window of k lines that best matches the whole of old_string.
    target = "\n".join(line.strip() for line in old_lines)
    whole = difflib.SequenceMatcher(autojunk=False)
    whole.set_seq2(target)
    best, best_ratio = -1, 0.0
    for _, i in scored[:25]:
        whole.set_seq1("\n".join(line.strip() for line in file_lines[i : i + k]))
        ratio = whole.ratio()
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    if best < 0 or best_ratio < 0.6:
        return None
    return best, min(len(file_lines) - 1, best + k - 1)


def _line_of(text: str, index: int) -> int:
    """0-based line number of a character index."""
    return text.count("\n", 0, index)


class EditTool(Tool):
    name = "edit"
    description = (
        "Replace text in a file. old_string must match the file's current text exactly — "
        "indentation, whitespace and line breaks included — and exactly once, unless replace_all "
        "is true (then every occurrence is replaced; useful for renames). Copy old_string from read "
        "output without the line-number prefix, and include a few surrounding lines when needed to "
        "make it unique. You must have read the file in this session. Several edits to one file "
        "can be made one call after another. With an empty old_string on a path that does not "
        "exist, creates the file (write does that too)."
    )
    input_model = EditInput

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, EditInput)
        path = ctx.resolve_path(params.path, tool=self.name)
        rel = ctx.relative(path)
        old, new = params.old_string, params.new_string
        if old == new:
            raise ToolError("old_string and new_string are identical; there is nothing to change.")
        if path.is_dir():
            raise ToolError(f"{rel} is a directory, not a file.")
        current = await current_text(ctx, path, rel)
        notes: list[str] = []

        if current is None:
            if old:
                raise missing_file_error(ctx, path)
            return await self._apply(ctx, params, path, rel, None, new, 0, 0, notes)
        if not old:
            if current:
                raise ToolError(
                    f"old_string is empty but {rel} already exists. To replace its whole text use "
                    "write; to change part of it give the exact text to replace."
                )
        if not ctx.ledger.has_read(path):
            raise ToolError(
                f"You have not read {rel} in this session. Read it first (read tool), then edit it."
            )

        if not old:  # an existing empty file: fill it
            return await self._apply(ctx, params, path, rel, current, new, 1, 0, notes)

        if uses_crlf(current):
            old, new = to_crlf(old), to_crlf(new)
            if old not in current and params.old_string in current:
                old, new = params.old_string, params.new_string
        count = self._matches(rel, current, old, params)
        saw_all = True
        if is_large(current):
            notes.append(
                f"{rel} is too large to check against your earlier read; old_string matched its "
                "current content."
            )
        elif ctx.ledger.changed_since_read(path, current):
            # The model has not seen the other changes: the file stays "changed since read", so
            # a later write of the whole file cannot erase them unseen.
            saw_all = False
            notes.append(
                f"{rel} had changed since you last read it; the edit was applied because old_string "
                "still matched exactly. Re-read the file if other parts of it matter to you."
            )
        first = current.index(old)
        if params.replace_all:
            updated = current.replace(old, new)
        else:
            updated = current[:first] + new + current[first + len(old) :]
        return await self._apply(
            ctx, params, path, rel, current, updated, count, first, notes, new, saw_all
        )

    def _matches(self, rel: str, current: str, old: str, params: EditInput) -> int:
        """How many times old_string is in the file: once, or more with replace_all."""
        count = current.count(old)
        if count == 0:
            raise ToolError(self._not_found(rel, current, params.old_string))
        if count > 1 and not params.replace_all:
            lines = self._match_lines(current, old)
            shown = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
            raise ToolError(
                f"old_string matches {count} times in {rel} (starting on lines {shown}). Include "
                "more surrounding lines in old_string so that it matches exactly one place, or set "
                "replace_all=true to replace every occurrence."
            )
        return count

    async def _apply(
        self,
        ctx: ToolContext,
        params: EditInput,
        path: Path,
        rel: str,
        current: str | None,
        updated: str,
        count: int,
        first: int,
        notes: list[str],
        new: str | None = None,
        saw_all: bool = True,
    ) -> ToolResult:
        verb = "Create" if current is None else "Edit"
        written = await authorize_and_write(
            ctx,
            tool=self.name,
            params=params,
            path=path,
            rel=rel,
            verb=verb,
            current=current,
            new_text=updated,
            not_done="was not changed",
            refusal="the workspace refused the edit",
        )
        outcome, written_text = written.outcome, written.text
        if saw_all:
            ctx.ledger.record(path, written_text)
        meta = {"path": rel, "replacements": count, "created": current is None}
        if written.changed:
            meta["userChanged"] = True
        if current is None:
            summary = f"Created {rel} ({plural(len(display_lines(written_text)), 'line')})."
            output = "\n".join([*written.changed, summary, *notes, *outcome_lines(outcome)])
            return ToolResult(output, title=f"{verb} {rel}", metadata=meta)

        inserted = new if new is not None else updated
        start_line = _line_of(updated, first)
        end_line = start_line + inserted.count("\n") - (1 if inserted.endswith("\n") else 0)
        end_line = max(start_line, end_line)
        summary = f"Edited {rel}: replaced {plural(count, 'occurrence')}."
        if written.changed:  # the region the user's version changed, not the proposal's
            changed = hunks(current, written_text)
            start_line = changed[0].new_start if changed else 0
            last = changed[-1] if changed else None
            end_line = last.new_start + max(len(last.new_lines) - 1, 0) if last else 0
            summary = f"Edited {rel} as the user accepted it."
        lines = display_lines(written_text)
        parts = [*written.changed, summary, *notes]
        if lines:
            label = "first change" if count > 1 and not written.changed else "the changed region"
            parts.append(f"Lines around {label} (after the edit):")
            parts.append(_snippet(lines, start_line, end_line, _SNIPPET_CONTEXT))
        parts.extend(outcome_lines(outcome))
        return ToolResult("\n".join(parts), title=f"{verb} {rel}", metadata=meta)

    @staticmethod
    def _match_lines(text: str, needle: str) -> list[int]:
        found: list[int] = []
        start = 0
        while len(found) < 50:
            i = text.find(needle, start)
            if i < 0:
                break
            found.append(_line_of(text, i) + 1)
            start = i + 1
        return found

    @staticmethod
    def _not_found(rel: str, current: str, old: str) -> str:
        message = f"old_string was not found in {rel}; nothing was changed."
        file_lines = display_lines(current)
        old_lines = [line for line in old.split("\n") if line.strip()]
        if old_lines and all(_LINE_NUMBER_PREFIX.match(line) for line in old_lines):
            message += (
                " old_string seems to include the line-number prefixes from read's output "
                "(digits and a tab); leave them out."
            )
        where = _whitespace_match(file_lines, old)
        if where is not None:
            first, last = where
            span = f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"
            return (
                f"{message} It does match at {span} if whitespace and indentation are ignored, so "
                "the spaces/tabs or line breaks differ. The exact text there is:\n"
                f"{_snippet(file_lines, first, last, 0)}\n"
                "Copy old_string exactly from it (without the line numbers)."
            )
        near = _closest(file_lines, old)
        if near is not None:
            first, last = near
            return (
                f"{message} The most similar lines in the file are:\n"
                f"{_snippet(file_lines, first, last, 1)}\n"
                "Re-read the file if it may have changed, and copy old_string exactly."
            )
        return (
            message + " Re-read the file to see its current content, and copy old_string exactly."
        )
