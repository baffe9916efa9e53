"""glob: find files by name pattern (ripgrep's file walker: .gitignore respected)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field

from agentls.tools._common import (
    RG_BASE_FLAGS,
    expect_input,
    glob_matcher,
    input_dict,
    plural,
    run_rg,
)
from agentls.tools.base import PermissionQuery, Tool, ToolContext, ToolError, ToolInput, ToolResult

MAX_FILES = 100


class GlobInput(ToolInput):
    pattern: str = Field(
        description="Glob matched against paths relative to `path`, e.g. `**/*.py`, "
        "`src/**/test_*.ts`, `*.{json,yaml}`. A pattern without `/` matches file names at any depth."
    )
    path: str | None = Field(
        default=None, description="Directory to search in (default: the workspace root)."
    )


def names_hidden(pattern: str) -> bool:
    """Whether the pattern spells out a dotfile or dot-directory (`.env`, `.github/**`)."""
    for segment in pattern.replace("\\", "/").split("/"):
        if segment.startswith(".") and segment not in (".", ".."):
            return True
        if segment.startswith("{") and any(
            p.startswith(".") for p in segment.strip("{}").split(",")
        ):
            return True
    return False


def hidden_args(pattern: str) -> list[str]:
    """rg flags so that dotfiles the pattern names are walked (never .git)."""
    return ["--hidden", "--glob", "!.git"] if names_hidden(pattern) else []


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
        base = ctx.resolve_path(params.path, tool=self.name)
        rel_base = ctx.relative(base)
        pattern = params.pattern.strip()
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
        await ctx.authorize(
            PermissionQuery(
                tool=self.name,
                subject=rel_base,
                title=f"Find {pattern} in {rel_base}",
                input=input_dict(params),
                path=base,
                outside_workspace=ctx.is_outside(base),
            )
        )
        if not base.exists():
            raise ToolError(f"Directory not found: {rel_base}.")
        if not base.is_dir():
            raise ToolError(
                f"{rel_base} is a file, not a directory; path must be a directory to search in."
            )

        # The glob is matched here, not with rg --glob: rg's globs override .gitignore (a
        # matching ignored file would be listed), while rg --files alone honours it.
        matcher = glob_matcher(pattern)
        found: list[str] = []
        total = 0
        hidden = 0

        def on_line(line: bytes) -> bool:
            nonlocal total, hidden
            name = line.rstrip(b"\n").decode("utf-8", "surrogateescape")
            if not matcher.match(name):
                return True
            if not ctx.may_show(base / Path(name)):
                hidden += 1
                return True
            total += 1
            if len(found) < MAX_FILES:
                found.append(name)
            return True

        args = [*RG_BASE_FLAGS, "--files", "--sortr", "modified", *hidden_args(pattern)]
        result = await run_rg(args, base, on_line)
        if result.returncode == 2 and total == 0:
            raise ToolError(f"glob failed: {result.stderr or 'ripgrep reported an error'}")
        secret_note = (
            f"\n({plural(hidden, 'file')} that may hold secrets (.env, keys) left out; reading them needs the user's permission.)"
            if hidden
            else ""
        )
        if total == 0:
            return ToolResult(
                f"No files found matching {pattern} in {rel_base}." + secret_note,
                title=f"glob {pattern}",
                metadata={"count": 0},
            )
        paths = [ctx.relative(base / Path(p)) for p in found]
        output = "\n".join(paths) + secret_note
        if total > len(found):
            output += (
                f"\n\n(Showing the {len(found)} most recently modified of {plural(total, 'file')}; "
                f"{total - len(found)} more not shown. Use a more specific pattern or path.)"
            )
        return ToolResult(output, title=f"glob {pattern}", metadata={"count": total})
