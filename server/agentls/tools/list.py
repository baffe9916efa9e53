"""list: a directory as a tree, a few levels deep (ripgrep's walker: .gitignore respected)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import Field

from agentls.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
)
from agentls.tools.support.every_folder import in_every_folder
from agentls.tools.support.ripgrep import RG_BASE_FLAGS, run_rg
from agentls.tools.support.text import plural

MAX_ENTRIES = 200
MAX_DEPTH = 4
# Directories left out even when no .gitignore names them.
SKIPPED_DIRS = (
    ".git",
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    ".idea",
    ".DS_Store",
)
# Stop walking after this many files: the tree of a huge directory is summarised anyway.
MAX_WALK_FILES = 200_000


class ListInput(ToolInput):
    path: str | None = Field(
        default=None, description="Directory to list (default: the workspace root)."
    )


@dataclass
class _Dir:
    dirs: dict[str, _Dir] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    total_files: int = 0  # everything below, at any depth
    expanded: bool = False


def _add(root: _Dir, parts: list[str]) -> None:
    node = root
    node.total_files += 1
    # Directories deeper than MAX_DEPTH are never shown: count their files on the last shown one.
    for depth, part in enumerate(parts[:-1]):
        if depth >= MAX_DEPTH:
            return
        node = node.dirs.setdefault(part, _Dir())
        node.total_files += 1
    if len(parts) <= MAX_DEPTH:
        node.files.append(parts[-1])


def _choose(root: _Dir) -> tuple[int, bool]:
    """Expand directories breadth first, smallest first, while the entries fit. Returns
    (entries shown, whether the top level itself was cut)."""
    root.expanded = True
    shown = len(root.dirs) + len(root.files)
    if shown > MAX_ENTRIES:
        return MAX_ENTRIES, True
    level = [root.dirs[name] for name in sorted(root.dirs)]
    depth = 1
    while level and depth < MAX_DEPTH:
        next_level: list[_Dir] = []
        # Smallest first: expanding many small directories tells more than one huge one.
        for node in sorted(level, key=lambda d: len(d.dirs) + len(d.files)):
            size = len(node.dirs) + len(node.files)
            if shown + size > MAX_ENTRIES:
                continue
            node.expanded = True
            shown += size
            next_level.extend(node.dirs[name] for name in sorted(node.dirs))
        level = next_level
        depth += 1
    return shown, False


def _render(node: _Dir, indent: str, out: list[str], budget: list[int]) -> None:
    for name in sorted(node.dirs):
        if budget[0] <= 0:
            return
        child = node.dirs[name]
        budget[0] -= 1
        if child.expanded:
            out.append(f"{indent}{name}/")
            _render(child, indent + "  ", out, budget)
        else:
            out.append(f"{indent}{name}/ ({plural(child.total_files, 'file')})")
    for name in sorted(node.files):
        if budget[0] <= 0:
            return
        budget[0] -= 1
        out.append(f"{indent}{name}")


class ListTool(Tool):
    name = "list"
    description = (
        "List a directory as an indented tree: directories first (with a trailing /), then files, "
        f"up to {MAX_DEPTH} levels deep and about {MAX_ENTRIES} entries. Respects .gitignore and "
        "skips .git, node_modules, __pycache__, virtualenvs and caches; empty directories are not "
        "shown. Directories too big to expand show their file count: list them directly to see "
        "inside. To find files by pattern use glob."
    )
    input_model = ListInput
    read_only = True

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, ListInput)
        if (every := await in_every_folder(self, params, ctx)) is not None:
            return every  # no path, several workspace folders: each searched
        base = ctx.resolve_path(params.path, tool=self.name)
        rel = ctx.relative(base)
        await ctx.authorize_path(self.name, base, f"List {rel}", params)
        if not base.exists():
            raise ToolError(f"Directory not found: {rel}.")
        if not base.is_dir():
            raise ToolError(f"{rel} is a file, not a directory. Use read to see its contents.")

        root = _Dir()
        walked = 0

        def on_line(line: bytes) -> bool:
            nonlocal walked
            walked += 1
            text = line.rstrip(b"\n").decode("utf-8", "replace")
            _add(root, text.split("/"))
            return walked < MAX_WALK_FILES

        args = [*RG_BASE_FLAGS, "--files", "--hidden"]
        for skipped in SKIPPED_DIRS:
            args += ["--glob", f"!{skipped}"]
        result = await run_rg(args, base, on_line)
        if result.returncode == 2 and walked == 0 and result.stderr:
            raise ToolError(f"list failed: {result.stderr}")

        header = f"{rel}/" if rel != "." else "./"
        if walked == 0:
            return ToolResult(
                f"{header}\n(no files: the directory is empty, or everything in it is ignored)",
                title=f"list {rel}",
                metadata={"files": 0},
            )
        shown, top_cut = _choose(root)
        lines = [header]
        _render(root, "  ", lines, [shown])
        notes: list[str] = []
        total_top = len(root.dirs) + len(root.files)
        if top_cut:
            notes.append(
                f"(Only the first {MAX_ENTRIES} of {total_top} entries in {rel} are shown; use glob "
                "to find specific files.)"
            )
        elif any(not d.expanded for d in _all_dirs(root)):
            notes.append(
                "(Directories with a file count were not expanded to keep this short; list them "
                "to see inside.)"
            )
        if result.stopped_early:
            notes.append(f"(Stopped after {MAX_WALK_FILES} files: counts are incomplete.)")
        output = "\n".join(lines) + ("\n\n" + "\n".join(notes) if notes else "")
        return ToolResult(
            output,
            title=f"list {rel}",
            metadata={"files": root.total_files, "entries": shown},
        )


def _all_dirs(node: _Dir) -> list[_Dir]:
    out: list[_Dir] = []
    stack = list(node.dirs.values())
    while stack:
        d = stack.pop()
        out.append(d)
        stack.extend(d.dirs.values())
    return out
