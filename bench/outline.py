"""outline: the tokens a model spends to see one function of a large file, reading by outline
(the `outline` tool, then `read` of the function's line range) against reading the whole file
(`read` page by page, as the tool pages a long file), on a real repository.

The repository is more-itertools (the pinned sdist bench/language.py downloads once into
bench/results/cache/): more.py (about 5,300 lines) and recipes.py (about 1,500). For LOOKUPS
public top-level functions spread evenly through the two files (two thirds from more.py), the
scripted model reads each function both ways, every tool called as the model would call it
(run() with a ToolContext whose every permission is granted; the disk workspace, its language
server jedi-language-server started by agentls itself, as headless agentls does):

- whole file: `read` {path}, then {path, offset} for each further page, until the file's end;
- by outline: `outline` {path}, the function's range taken from that output (`function NAME
  A-B`), then `read` {path, offset: A, limit: B - A + 1}.

Tokens are the outputs' characters / 4 (the estimate agentls' compaction uses). Two figures:
one function in a fresh conversation (the medians of the lookups), and all the lookups in one
conversation (each file read whole once, against each file outlined once plus every range). A
range counts as complete when it holds the function's whole definition, decorators included, as
Python's own parser (ast) places it.
"""

from __future__ import annotations

import ast
import asyncio
import re
import statistics
from pathlib import Path
from typing import Any

from bench.common import BenchResult, Figure, log, temp_dir
from bench.language import PACKAGE, VERSION, LanguageCtx, sdist, unpack

FILES = ("more_itertools/more.py", "more_itertools/recipes.py")
LOOKUPS = 30


def pick(root: Path, files: tuple[str, ...], lookups: int) -> list[tuple[str, str]]:
    """(file, function) for `lookups` public top-level functions, evenly spread through each
    file, the first file given twice the share of each other."""
    weights = [2] + [1] * (len(files) - 1)
    shares = [lookups * w // sum(weights) for w in weights]
    shares[0] += lookups - sum(shares)
    picked: list[tuple[str, str]] = []
    for rel, share in zip(files, shares, strict=True):
        tree = ast.parse((root / rel).read_text())
        names = [
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and not node.name.startswith("_")
        ]
        step = len(names) / share
        picked.extend((rel, names[int(i * step)]) for i in range(share))
    return picked


def true_span(source: str, name: str) -> tuple[int, int]:
    """The 1-based first and last line of the top-level function `name`, decorators included."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return first, node.end_lineno or node.lineno
    raise LookupError(name)


def range_in(outline: str, name: str) -> tuple[int, int] | None:
    """The range the outline gives the top-level function `name` (`function NAME A-B`)."""
    m = re.search(rf"^function {re.escape(name)} (\d+)(?:-(\d+))?$", outline, re.MULTILINE)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2) or m.group(1))


async def call(ctx: LanguageCtx, tool: Any, **raw: Any) -> Any:
    """The tool's ToolResult (its output is what the model reads)."""
    return await tool.run(tool.parse(raw), ctx)


async def measure(root: Path, files: tuple[str, ...], lookups: int) -> dict[str, Any]:
    """Both ways for every picked function (see the module's docstring): per file, the whole
    read's and the outline's tokens; per lookup, the range's tokens and whether it is complete."""
    from agentls.tools.outline import OutlineTool
    from agentls.tools.read import ReadTool

    read, outline = ReadTool(), OutlineTool()
    ctx = LanguageCtx(root)
    per_file: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    try:
        for rel in files:
            pages, offset, text = 0, 1, ""
            while True:  # page by page, as the read tool's footer says to go on
                page = await call(ctx, read, path=rel, offset=offset)
                pages, text = pages + 1, text + page.output
                offset += page.metadata["lines_shown"]
                if offset > page.metadata["total_lines"]:
                    break
            shown = (await call(ctx, outline, path=rel)).output
            per_file[rel] = {
                "lines": len((root / rel).read_text().splitlines()),
                "whole_pages": pages,
                "whole_tokens": len(text) // 4,
                "outline_tokens": len(shown) // 4,
                "outline": shown,
            }
            log(
                f"{rel}: {per_file[rel]['lines']:,} lines; whole {pages} page(s), "
                f"{per_file[rel]['whole_tokens']:,} tokens; outline "
                f"{per_file[rel]['outline_tokens']:,} tokens"
            )
        for rel, name in pick(root, files, lookups):
            first, last = true_span((root / rel).read_text(), name)
            found = range_in(per_file[rel]["outline"], name)
            row: dict[str, Any] = {"file": rel, "function": name, "lines": [first, last]}
            if found is None:
                row.update(outline_range=None, range_tokens=0, complete=False)
            else:
                start, end = found
                part = await call(ctx, read, path=rel, offset=start, limit=end - start + 1)
                row.update(
                    outline_range=[start, end],
                    range_tokens=len(part.output) // 4,
                    complete=start <= first and last <= end,
                )
            rows.append(row)
    finally:
        await ctx.workspace.languages.aclose()
    for info in per_file.values():
        info.pop("outline")
    return {"files": per_file, "lookups": rows}


def summarize(measured: dict[str, Any]) -> dict[str, Any]:
    files, rows = measured["files"], measured["lookups"]
    whole_one = [files[r["file"]]["whole_tokens"] for r in rows]
    outline_one = [files[r["file"]]["outline_tokens"] + r["range_tokens"] for r in rows]
    return {
        "one_whole_median": statistics.median(whole_one),
        "one_outline_median": statistics.median(outline_one),
        "all_whole": sum(f["whole_tokens"] for f in files.values()),
        "all_outline": sum(f["outline_tokens"] for f in files.values())
        + sum(r["range_tokens"] for r in rows),
        "complete": sum(1 for r in rows if r["complete"]),
        "lookups": len(rows),
    }


def run(result: BenchResult) -> None:
    result.rounds = 1
    archive = sdist()
    with temp_dir("outline") as tmp:
        root = unpack(archive, tmp)
        measured = asyncio.run(measure(root, FILES, LOOKUPS))
    s = summarize(measured)
    where = f"{s['lookups']} functions of more-itertools {VERSION} more.py and recipes.py"
    result.add(
        Figure(
            f"outline: tokens to see one function, outline + its range ({where}; median)",
            s["one_outline_median"],
            "tokens",
            s["one_whole_median"],
            round(s["one_outline_median"] / s["one_whole_median"], 3),
            "fewer than the whole file",
            s["one_outline_median"] < s["one_whole_median"],
            note="floor: `read` of the whole file, page by page; characters / 4",
        )
    )
    result.add(
        Figure(
            f"outline: tokens for the {s['lookups']} functions in one conversation",
            s["all_outline"],
            "tokens",
            s["all_whole"],
            round(s["all_outline"] / s["all_whole"], 3),
            "fewer than the whole files",
            s["all_outline"] < s["all_whole"],
            note="each file outlined once + every range, against each file read whole once",
        )
    )
    result.add(
        Figure(
            "outline: ranges that hold the whole function (decorators included)",
            s["complete"],
            "of " + str(s["lookups"]),
            target="all",
            met=s["complete"] == s["lookups"],
            note="the outline's range against Python's own parser (ast)",
        )
    )
    result.details = {"repository": f"{PACKAGE} {VERSION}", "summary": s, **measured}
