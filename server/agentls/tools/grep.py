"""grep: regex search of file contents with ripgrep."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from agentls.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
    show_filter,
)
from agentls.tools.support.every_folder import in_every_folder
from agentls.tools.support.glob_patterns import glob_matcher, names_hidden
from agentls.tools.support.ripgrep import (
    RG_BASE_FLAGS,
    RgResult,
    run_rg_blocks,
    run_rg_parts,
    walk_parts,
)
from agentls.tools.support.text import plural

MAX_MATCHES = 100
MAX_COLUMNS = 300
# rg's flags for every grep call (the include glob, the pattern and the paths follow).
RG_GREP_FLAGS = (
    *RG_BASE_FLAGS,
    "--line-number",
    "--no-heading",
    "--with-filename",
    "--null",
    "--max-columns",
    str(MAX_COLUMNS),
    "--max-columns-preview",
    "--sort",
    "path",
)
# Past this many matching lines we stop ripgrep and report "at least".
COUNT_LIMIT = 10_000


class GrepInput(ToolInput):
    pattern: str = Field(description="Regular expression (Rust/ripgrep syntax) to search for.")
    path: str | None = Field(
        default=None,
        description="File or directory to search (default: the workspace root).",
    )
    include: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. `*.py` or `*.{ts,tsx}`.",
    )


def _place(rel_base: str) -> str:
    """Where a search ran, for a sentence ("." would end it with "..")."""
    return "the workspace" if rel_base == "." else rel_base


class GrepTool(Tool):
    name = "grep"
    description = (
        "Search file contents with a regular expression (ripgrep, Rust regex syntax: "
        r"`def \w+_test`, `TODO|FIXME`, `(?i)error`; escape literal `(`, `{`, `.` with a "
        "backslash). Searches `path` (a directory or a single file; default: the workspace root), "
        "respecting .gitignore and skipping hidden and binary files; `include` limits the search "
        "to files matching a glob (`*.py`, `*.{ts,tsx}`). Returns matching lines grouped by file, "
        f"with line numbers; at most {MAX_MATCHES} matching lines are shown and lines are cut at "
        f"{MAX_COLUMNS} characters. Matching is case-sensitive unless you add (?i). To find "
        "files by name use glob."
    )
    input_model = GrepInput
    read_only = True

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, GrepInput)
        if (every := await in_every_folder(self, params, ctx)) is not None:
            return every  # no path, several workspace folders: each searched
        base = ctx.resolve_path(params.path, tool=self.name)
        rel_base = ctx.relative(base)
        if not params.pattern:
            raise ToolError("pattern is empty; give a regular expression to search for.")
        await ctx.authorize_path(self.name, base, f"Search {rel_base} for {params.pattern}", params)
        _check_searchable(base, rel_base)
        cwd, target = (base, ".") if base.is_dir() else (base.parent, base.name)
        search = _Search(show_filter(ctx, cwd))
        include_args = search.include(params.include, target)
        args = [*RG_GREP_FLAGS, *include_args, "-e", params.pattern]
        result = await search.run(args, cwd, target)
        if result.returncode == 2 and search.total == 0:
            message = result.stderr or "ripgrep reported an error"
            raise ToolError(f"grep failed:\n{message}")
        return search.report(params, ctx, cwd, rel_base, result)


def _check_searchable(base: Path, rel_base: str) -> None:
    if not base.exists():
        raise ToolError(f"Path not found: {rel_base}.")
    if not base.is_dir() and not base.is_file():
        # rg would wait forever on a FIFO, or read a device without end.
        raise ToolError(
            f"{rel_base} is not a regular file (a device, socket or pipe); it cannot be searched."
        )


# A line of rg's output, classified: ("match", file, rest), ("hidden", file, ""), ("other",
# line, "").
Line = tuple[str, str, str]


@dataclass
class _Search:
    """One grep call's rg run(s) and what they found, grouped by file."""

    may_show: Callable[[str], bool]
    path_filter: re.Pattern[str] | None = None
    # A type match lets hidden files through (rg walks no hidden directory, but a dotfile
    # whose name matches is searched): dropped, unless include names them or the search is of
    # one file.
    drop_hidden: bool = False
    groups: dict[str, list[str]] = field(default_factory=dict)
    other: list[str] = field(default_factory=list)
    total: int = 0
    long_lines: int = 0
    hidden: set[str] = field(default_factory=set)
    shown_ok: dict[str, bool] = field(default_factory=dict)
    counted: list[int] = field(default_factory=list)  # the match lines that count, each part
    stopped_early: bool = False

    def include(self, raw: str | None, target: str) -> list[str]:
        """rg's arguments for the include glob (a path glob is matched here instead)."""
        include = (raw or "").strip()
        if include and "/" not in include:
            # A file type, not --glob: rg's --glob would override .gitignore for matching files.
            self.drop_hidden = target == "." and not names_hidden(include)
            return ["--type-add", f"include:{include}", "--type", "include"]
        if include:
            self.path_filter = glob_matcher(include)
        return []

    async def run(self, args: list[str], cwd: Path, target: str) -> RgResult:
        # Sorting keeps rg on one thread: a directory's walk is split between processes by
        # top-level entry, in name order, and their outputs taken one after the other.
        parts = walk_parts(cwd, hidden=False) if target == "." else [[]]
        self.counted = [0 for _ in parts]
        if len(parts) == 1:
            result = await run_rg_blocks([*args, "--", target], cwd, self.take_block)
            self.stopped_early = result.stopped_early
            return result
        kept: list[list[Line]] = [[] for _ in parts]
        result = await run_rg_parts(
            [[*args, *part, "--", target] for part in parts],
            cwd,
            [self.keep_in(i, k) for i, k in enumerate(kept)],
        )
        self.stopped_early = not all(self.take(*line) for lines in kept for line in lines)
        return result

    def classify(self, raw: bytes) -> Line | None:
        """A line of rg's output: ("match", file, rest) for one that counts (its file may be
        shown and matches include), ("hidden", file, "") for one of a file left out,
        ("other", line, "") for a note (a binary file...), None for one to skip."""
        line = raw.decode("utf-8", "replace")
        name, sep, rest = line.partition("\0")
        if not sep:  # not a match line (e.g. a note about a binary file)
            return ("other", line, "")
        if self.path_filter is not None and not self.path_filter.match(name.removeprefix("./")):
            return None
        if self.drop_hidden and name.rpartition("/")[2].startswith("."):
            return None
        if name not in self.shown_ok:
            self.shown_ok[name] = self.may_show(name[2:] if name.startswith("./") else name)
        if not self.shown_ok[name]:
            return ("hidden", name, "")
        return ("match", name, rest)

    def take(self, kind: str, name: str, rest: str) -> bool:
        """Adds a classified line to the result; False once there are enough."""
        if kind == "other":
            if len(self.other) < 5:
                self.other.append(name)
            return True
        if kind == "hidden":
            self.hidden.add(name)
            return True
        self.total += 1
        if self.total > MAX_MATCHES:
            return self.total < COUNT_LIMIT
        number, _, text = rest.partition(":")
        text = text.removesuffix("\r")
        if len(text) > MAX_COLUMNS:  # rg cut it already and appended "[... omitted ...]"
            self.long_lines += 1
            if len(text) > MAX_COLUMNS + 100:
                text = text[:MAX_COLUMNS] + " [... line cut]"
        self.groups.setdefault(name, []).append(f"  {number}: {text}")
        return True

    def take_block(self, block: bytes) -> bool:
        for raw in block.split(b"\n"):
            line = self.classify(raw)
            if line is not None and not self.take(*line):
                return False
        return True

    def keep_in(self, part: int, lines: list[Line]) -> Callable[[bytes], bool]:
        """For a part of the walk: its lines classified and kept, to be taken in the order
        of the parts; its rg stopped once it and the parts before it have enough."""
        others = 0
        seen_hidden: set[str] = set()
        counted = self.counted

        def on_block(block: bytes) -> bool:
            nonlocal others
            if sum(counted[:part]) >= COUNT_LIMIT:
                return False
            for raw in block.split(b"\n"):
                line = self.classify(raw)
                if line is None:
                    continue
                kind, name, _ = line
                if kind == "match":
                    counted[part] += 1
                elif kind == "hidden":
                    if name in seen_hidden:
                        continue
                    seen_hidden.add(name)
                elif others == 5:
                    continue
                else:
                    others += 1
                lines.append(line)
                if counted[part] >= COUNT_LIMIT:
                    return False
            return True

        return on_block

    def report(
        self, params: GrepInput, ctx: ToolContext, cwd: Path, rel_base: str, result: RgResult
    ) -> ToolResult:
        """The tool's answer: the matching lines by file, then the notes."""
        title = f"grep {params.pattern}"
        total = self.total
        secret_note = (
            f"({plural(len(self.hidden), 'file')} that may hold secrets (.env, keys) left out; reading them needs the user's permission.)"
            if self.hidden
            else ""
        )
        if total == 0:
            where = f" in files matching {params.include}" if params.include else ""
            return ToolResult(
                f"No matches found for {params.pattern} in {_place(rel_base)}{where}."
                + (f"\n{secret_note}" if secret_note else ""),
                title=title,
                metadata={"matches": 0},
            )
        blocks = []
        for name, lines in self.groups.items():
            shown = ctx.relative(cwd / Path(name))
            blocks.append(f"{shown}:\n" + "\n".join(lines))
        shown_count = min(total, MAX_MATCHES)
        count_text = f"at least {total}" if self.stopped_early else str(total)
        files = plural(len(self.groups), "file")
        header = f"{plural(shown_count, 'matching line')} in {files}"
        if total > MAX_MATCHES:
            header = f"{count_text} matching lines; showing the first {MAX_MATCHES} ({files})"
        output = header + ":\n\n" + "\n\n".join(blocks)
        notes = self._notes(count_text, secret_note, result)
        if notes:
            output += "\n\n" + "\n".join(notes)
        return ToolResult(output, title=title, metadata={"matches": total})

    def _notes(self, count_text: str, secret_note: str, result: RgResult) -> list[str]:
        notes: list[str] = []
        if self.total > MAX_MATCHES:
            more = "+" if self.stopped_early else ""
            notes.append(
                f"({count_text} matches in all; {self.total - MAX_MATCHES}{more} "
                "not shown. Narrow the search with a more specific pattern, path or include.)"
            )
        if self.long_lines:
            notes.append(
                f"({plural(self.long_lines, 'long line')} cut at {MAX_COLUMNS} characters.)"
            )
        if secret_note:
            notes.append(secret_note)
        if self.other:
            notes.append("(ripgrep also said: " + "; ".join(self.other[:5]) + ")")
        if result.returncode == 2 and result.stderr:
            notes.append(f"(Some files could not be searched: {result.stderr.splitlines()[0]})")
        return notes
