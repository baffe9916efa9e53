"""glob: find files by name pattern (ripgrep's file walker: .gitignore respected)."""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from agentls.tools.base import (
    ShowFilter,
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
from agentls.tools.support.ripgrep import RG_BASE_FLAGS, RgResult, run_rg_parts, walk_parts
from agentls.tools.support.text import plural

MAX_FILES = 100


class GlobInput(ToolInput):
    pattern: str = Field(
        description="Glob matched against paths relative to `path`, e.g. `**/*.py`, "
        "`src/**/test_*.ts`, `*.{json,yaml}`. A pattern without `/` matches file names at any depth."
    )
    path: str | None = Field(
        default=None, description="Directory to search in (default: the workspace root)."
    )


def hidden_args(pattern: str) -> list[str]:
    """rg flags so that dotfiles the pattern names are walked (never .git)."""
    return ["--hidden", "--glob", "!.git"] if names_hidden(pattern) else []


_TYPE = "globbed"


def file_name_glob(pattern: str) -> tuple[str, bool] | None:
    """A glob for `rg --type-add` that the name of every file the pattern matches (glob_matcher)
    matches: the pattern's last segment, when ripgrep reads it as glob_matcher does (`*`, `{a,b}`,
    plain characters; not `?`, which ripgrep matches to one byte, `[...]`, `**`, escapes). With
    it, whether the pattern is nothing more (`*.py`, `**/test_*.py`: the file name decides). None
    when there is no such glob, or it would not narrow anything (`*`)."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    head, slash, last = pattern.rpartition("/")
    if not last or last == "*" or "**" in last or any(c in last for c in "?[]\\:!"):
        return None
    if _brace_depth(head) != 0 or not _simple_braces(last):
        return None  # the last "/" is inside braces, or the braces are not plain alternatives
    return last, not slash or head == "**"


def _brace_depth(text: str) -> int | None:
    """How many braces are open at the end of text (None: a "}" closes none)."""
    depth = 0
    for c in text:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return None
    return depth


def _simple_braces(text: str) -> bool:
    """Braces not nested, each closed, each alternative in them non-empty."""
    inside = False
    previous = ""
    for c in text:
        if c == "{":
            if inside:
                return False
            inside = True
        elif c == "}":
            if not inside or previous in ("{", ","):
                return False
            inside = False
        elif c == "," and inside and previous in ("{", ","):
            return False
        previous = c
    return not inside


def newest_of(base: Path, lists: list[list[str]], limit: int) -> list[str]:
    """The `limit` most recently modified of the files in lists, each newest first (rg --sortr
    modified): a merge, which stats only the files it takes and the lists' heads."""
    prefix = str(base).rstrip("/") + "/"

    def age(name: str) -> int:
        try:
            return -os.stat(prefix + name).st_mtime_ns
        except OSError:
            return 1 << 80  # gone since: last, as rg puts a file it cannot stat

    merged: list[str] = []
    seen: set[str] = set()  # a directory made during the walk is walked by every process
    for name in heapq.merge(*lists, key=age):
        if name not in seen:
            seen.add(name)
            merged.append(name)
            if len(merged) == limit:
                break
    return merged


def has_hidden_file(listing: str) -> bool:
    """Whether a listing (paths joined by line breaks) names a hidden file (rg walks no hidden
    directory, so only a file's own name can start with a dot)."""
    return listing.startswith(".") or "/." in listing or "\n." in listing


def without_hidden_files(names: list[str]) -> list[str]:
    """The names without those of hidden files (see has_hidden_file)."""
    if not has_hidden_file("\n".join(names)):
        return names
    return [n for n in names if not n.startswith(".") and "/." not in n]


class GlobTool(Tool):
    name = "glob"
    description = (
        "Find files whose paths match a glob pattern, e.g. `**/*.py`, `src/**/*.{ts,tsx}`, "
        "`**/test_*.py`. The pattern is matched against paths relative to `path` (default: the "
        "workspace root); a pattern without `/` matches file names at any depth. Respects "
        ".gitignore and skips hidden files unless the pattern names them (`.github/**`, `.env`). "
        f"Returns at most {MAX_FILES} paths relative to the workspace root, most recently modified "
        "first. To search inside files use grep."
    )
    input_model = GlobInput
    read_only = True

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, GlobInput)
        if (every := await in_every_folder(self, params, ctx)) is not None:
            return every  # no path, several workspace folders: each searched
        base = ctx.resolve_path(params.path, tool=self.name)
        rel_base = ctx.relative(base)
        pattern = _pattern_under(base, rel_base, params.pattern)
        await ctx.authorize_path(self.name, base, f"Find {pattern} in {rel_base}", params)
        if not base.exists():
            raise ToolError(f"Directory not found: {rel_base}.")
        if not base.is_dir():
            raise ToolError(
                f"{rel_base} is a file, not a directory; path must be a directory to search in."
            )
        walk = _Walk(pattern, show_filter(ctx, base))
        found, result = await walk.run(base)
        if result.returncode == 2 and walk.total == 0:
            raise ToolError(f"glob failed: {result.stderr or 'ripgrep reported an error'}")
        return _answer(ctx, base, rel_base, pattern, found, walk)


def _pattern_under(base: Path, rel_base: str, raw: str) -> str:
    """The pattern relative to the search directory (an absolute one under it made relative)."""
    pattern = raw.strip()
    if not pattern:
        raise ToolError("pattern is empty; give a glob such as **/*.py.")
    pattern = pattern.removeprefix("./")
    if os.path.isabs(pattern):
        # An absolute pattern under the search directory: make it relative to it.
        base_text = str(base).rstrip("/") + "/"
        if not pattern.startswith(base_text):
            raise ToolError(
                f"pattern {pattern} is absolute and not under {rel_base}; give a pattern "
                "relative to path, and put the directory to search in path."
            )
        pattern = pattern[len(base_text) :]
    return pattern


class _Walk:
    """rg --files over the search directory, the pattern matched on what it lists.

    The glob is matched here, not with rg --glob: rg's globs override .gitignore (a matching
    ignored file would be listed), while rg --files alone honours it. A type filter on the file
    name (rg --type) does not override it, so rg lists (and stats, to sort) only the files whose
    names can match."""

    def __init__(self, pattern: str, show: ShowFilter) -> None:
        self.pattern = pattern
        self.name_glob = file_name_glob(pattern)
        name_glob = self.name_glob
        self.matcher = None if name_glob and name_glob[1] else glob_matcher(pattern)
        # A type match lets hidden files through (not hidden directories): drop them here.
        self.drop_hidden = name_glob is not None and not names_hidden(pattern)
        self.show = show
        self.total = 0
        self.hidden = 0

    async def run(self, base: Path) -> tuple[list[str], RgResult]:
        """The newest MAX_FILES matching files (relative to base), and rg's result."""
        args = [*RG_BASE_FLAGS, "--files", "--sortr", "modified", *hidden_args(self.pattern)]
        if self.name_glob is not None:
            args += ["--type-add", f"{_TYPE}:{self.name_glob[0]}", "--type", _TYPE]
        # Sorting keeps rg on one thread, and it stats every file it lists: the walk is split
        # between processes by top-level directory, and their newest files merged.
        parts = walk_parts(base, hidden=names_hidden(self.pattern))
        kept: list[list[str]] = [[] for _ in parts]
        result = await run_rg_parts(
            [[*args, *part] for part in parts], base, [self.keep_in(k) for k in kept]
        )
        found = kept[0] if len(kept) == 1 else newest_of(base, kept, MAX_FILES)
        return found, result

    def keep_in(self, found: list[str]) -> Callable[[bytes], bool]:
        def on_block(block: bytes) -> bool:
            listing = block.decode("utf-8", "surrogateescape")
            room = MAX_FILES - len(found)
            if (
                self.matcher is None
                and not (self.drop_hidden and has_hidden_file(listing))
                and self.show.shows_all(listing)
            ):  # every name listed is one to show: count them, keep the first
                self.total += listing.count("\n") + 1
                if room > 0:
                    found.extend(listing.split("\n", room)[:room])
                return True
            names = listing.split("\n")
            if self.matcher is not None:
                names = list(filter(self.matcher.match, names))
            if self.drop_hidden:
                names = without_hidden_files(names)
            shown, left_out = self.show.split(names)
            self.hidden += left_out
            self.total += len(shown)
            if room > 0:
                found.extend(shown[:room])
            return True

        return on_block


def _answer(
    ctx: ToolContext, base: Path, rel_base: str, pattern: str, found: list[str], walk: _Walk
) -> ToolResult:
    """The tool's answer: the paths found, newest first, and what was left out."""
    total, hidden = walk.total, walk.hidden
    secret_note = (
        f"\n({plural(hidden, 'file')} that may hold secrets (.env, keys) left out; reading them needs the user's permission.)"
        if hidden
        else ""
    )
    if total == 0:
        return ToolResult(
            f"No files found matching {pattern} in "
            f"{'the workspace' if rel_base == '.' else rel_base}." + secret_note,
            title=f"glob {pattern}",
            metadata={"count": 0},
        )
    if ctx.is_outside(base):
        paths = [ctx.relative(base / Path(p)) for p in found]
    else:  # ctx.relative of each, without a Path a file
        paths = found if rel_base == "." else [f"{rel_base}/{p}" for p in found]
    output = "\n".join(paths) + secret_note
    if total > len(found):
        output += (
            f"\n\n(Showing the {len(found)} most recently modified of {plural(total, 'file')}; "
            f"{total - len(found)} more not shown. Use a more specific pattern or path.)"
        )
    return ToolResult(output, title=f"glob {pattern}", metadata={"count": total})
