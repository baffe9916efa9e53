"""language: finding a function's uses with the language server (the `references` tool) against
grep for its name (the `grep` tool), on a real repository; and a rename across files checked by
the project's own tests.

The repository is more-itertools (its sdist, pinned, downloaded once with `pip download` into
bench/results/cache/), whose more.py has about 5,300 lines. For 30 top-level functions of
more.py, evenly spread through the file, each tool is called as the model would call it (run()
with a ToolContext whose every permission is granted; the workspace is the disk, its language
server jedi-language-server started by agentls itself, as headless agentls does):
`references` {path, symbol, line} and `grep` {pattern: \\bNAME\\b}.

The truth is jedi's own answer (textDocument/references straight from the language server):
the lines that refer to the function, its definition's line left out of every set (a use is
what is sought). For each tool, a hit is a (file, line) it shows; precision is the share of its
hits that are uses, recall the share of the uses that are among its hits, both over the 30
functions together. For `references` this measures what the tool keeps of jedi's answer (the
symbol found from its name and line, the output's cap); for grep, what a search by name gives. Tokens are the output's characters / 4 (the estimate agentls' compaction uses).

The renames (RENAMES), each in a fresh copy: a function is renamed with the `rename` tool
(jedi's WorkspaceEdit, applied as one change), then the project's test suite runs (python -m
unittest); the figure is whether it passes. (What jedi leaves, the old name in strings and
docstrings, is in the results' details.)
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from bench.common import RESULTS, BenchResult, Figure, log, temp_dir
from bench.search import Ctx

PACKAGE = "more-itertools"
VERSION = "10.8.0"
FUNCTIONS = 30
CACHE = RESULTS / "cache"
# (where it is defined, the function, its new name): a private helper used in two modules, and
# a public function of the package's API (imported by more.py, exported with `__all__`, called
# by the tests as more_itertools.take).
RENAMES = (
    ("more_itertools/recipes.py", "_zip_equal", "_zip_equal_checked"),
    ("more_itertools/recipes.py", "take", "take_first"),
)
# A cold jedi's rename takes 9 to 20 s for a name used in two files, about a minute for one used
# in five (2 cores, shared): the default languageTimeoutS (15 s) is raised for the benchmark.
RENAME_TIMEOUT_S = 120.0
HIT = re.compile(r"^\s+(\d+):")  # "  123: text" under its file's line


def sdist() -> Path:
    """The pinned sdist, downloaded once into the cache."""
    CACHE.mkdir(parents=True, exist_ok=True)
    found = sorted(CACHE.glob(f"more[-_]itertools-{VERSION}.tar.gz"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
             ":all:", f"{PACKAGE}=={VERSION}", "--dest", str(CACHE)],
            check=True,
        )  # fmt: skip
        found = sorted(CACHE.glob(f"more[-_]itertools-{VERSION}.tar.gz"))
    if not found:
        raise RuntimeError(f"pip download left no {PACKAGE} {VERSION} sdist in {CACHE}")
    return found[0]


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    (root,) = [p for p in into.iterdir() if p.is_dir()]
    return root


def pick_functions(more_py: Path) -> list[tuple[str, int]]:
    """FUNCTIONS public top-level functions of more.py, evenly spread: (name, 1-based line)."""
    defs = [
        (m.group(1), number)
        for number, line in enumerate(more_py.read_text().splitlines(), 1)
        if (m := re.match(r"def ([a-z]\w*)\(", line))
    ]
    step = len(defs) / FUNCTIONS
    return [defs[int(i * step)] for i in range(FUNCTIONS)]


def hits(output: str) -> set[tuple[str, int]]:
    """The (file, line) pairs a tool's output shows: a file's line ("path:" from grep, "path (N)"
    from references), then its hits ("  123: text")."""
    found: set[tuple[str, int]] = set()
    current: str | None = None
    for line in output.splitlines():
        if line and not line[0].isspace():
            current = re.sub(r" \(\d+\)$", "", line.rstrip().removesuffix(":"))
            continue
        m = HIT.match(line)
        if m and current is not None:
            found.add((current, int(m.group(1))))
    return found


class LanguageCtx(Ctx):
    """bench/search.py's context (every permission granted) on a DiskWorkspace whose language
    server for .py files is jedi-language-server, started by agentls on first use (its requests
    may take RENAME_TIMEOUT_S)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        from agentls.config import LanguageServerConfig, Settings
        from agentls.verify.workspace import DiskWorkspace

        jedi = Path(sys.executable).with_name("jedi-language-server")
        settings = Settings(
            language_servers={
                "python": LanguageServerConfig(
                    command=[str(jedi)], extensions=[".py"], timeout_s=RENAME_TIMEOUT_S
                )
            }
        )
        self.workspace = DiskWorkspace(self.root, lambda: settings)


async def truth(ctx: LanguageCtx, rel: str, name: str, line: int) -> set[tuple[str, int]]:
    """jedi's references to the function defined at `line` of `rel`, as (file, line) pairs."""
    path = ctx.root / rel
    text = path.read_text().splitlines()[line - 1]
    result = await ctx.workspace.languages.request(
        "textDocument/references",
        {
            "textDocument": {"uri": path.as_uri()},
            "position": {"line": line - 1, "character": text.index(name)},
            "context": {"includeDeclaration": False},
        },
        path,
    )
    found = set()
    for location in result or []:
        file = Path(location["uri"].removeprefix("file://"))
        found.add((ctx.relative(file), location["range"]["start"]["line"] + 1))
    return found


async def measure(root: Path) -> list[dict[str, Any]]:
    from agentls.tools.base import ToolError
    from agentls.tools.registry import default_tools

    tools = {tool.name: tool for tool in default_tools()}
    references, grep = tools["references"], tools["grep"]
    ctx = LanguageCtx(root)
    rel = "more_itertools/more.py"
    rows = []
    try:
        t = time.perf_counter()
        await truth(ctx, rel, *pick_functions(root / rel)[0])  # starts jedi, warms its cache
        log(
            f"jedi-language-server answered its first references in {time.perf_counter() - t:.1f} s"
        )
        for name, line in pick_functions(root / rel):
            definition = (rel, line)
            uses = await truth(ctx, rel, name, line) - {definition}
            row: dict[str, Any] = {"function": name, "line": line, "uses": len(uses)}
            calls: dict[str, tuple[Any, dict[str, Any]]] = {
                "references": (references, {"path": rel, "symbol": name, "line": line}),
                "grep": (grep, {"pattern": rf"\b{name}\b"}),
            }
            for label, (tool, raw) in calls.items():
                t = time.perf_counter()
                try:
                    output = (await tool.run(tool.parse(raw), ctx)).output
                except ToolError as exc:
                    output = str(exc)
                took = time.perf_counter() - t
                shown = hits(output) - {definition}
                row[label] = {
                    "hits": len(shown),
                    "true": len(shown & uses),
                    "false_in_py": len([f for f, _ in shown - uses if f.endswith(".py")]),
                    "tokens": len(output) // 4,
                    "ms": round(took * 1000, 1),
                }
            rows.append(row)
            log(
                f"{name}: {len(uses)} uses; references {row['references']['true']}/"
                f"{row['references']['hits']}, grep {row['grep']['true']}/{row['grep']['hits']}"
            )
    finally:
        await ctx.workspace.languages.aclose()
    return rows


def using(root: Path, name: str) -> dict[str, list[int]]:
    """The Python files (and stubs) of the project with `name` as a word, and its lines in each."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    found: dict[str, list[int]] = {}
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.pyi")]):
        lines = path.read_text().splitlines()
        numbers = [n for n, text in enumerate(lines, 1) if word.search(text)]
        if numbers:
            found[path.relative_to(root).as_posix()] = numbers
    return found


async def rename(root: Path, rel: str, old: str, new: str) -> dict[str, Any]:
    """`old` (a function defined in `rel`) renamed to `new` with the rename tool in a fresh
    copy, every file it touches read first (as the model must)."""
    from agentls.tools.base import ToolError
    from agentls.tools.registry import default_tools

    tools = {tool.name: tool for tool in default_tools()}
    ctx = LanguageCtx(root)
    before = using(root, old)
    try:
        for file in before:
            await tools["read"].run(tools["read"].parse({"path": file}), ctx)
        line = next(
            n for n, text in enumerate((root / rel).read_text().splitlines(), 1)
            if text.startswith(f"def {old}(")
        )  # fmt: skip
        t = time.perf_counter()
        try:
            result = await tools["rename"].run(
                tools["rename"].parse({"path": rel, "symbol": old, "line": line, "new_name": new}),
                ctx,
            )
            is_error, output = result.is_error, result.output
        except ToolError as exc:
            is_error, output = True, str(exc)
        took = time.perf_counter() - t
    finally:
        await ctx.workspace.languages.aclose()
    return {
        "rename": f"{old} -> {new}",
        "files_using_it": sorted(before),
        "is_error": is_error,
        "output": output[:3000],
        "s": round(took, 1),
        "old_name_left": using(root, old),
    }


def project_tests(root: Path) -> dict[str, Any]:
    """The project's own test suite (unittest), after the rename."""
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = tests.stderr.strip().splitlines()
    errors = [
        x for x in lines if re.match(r"\w+Error: ", x) and "Failed to import test module" not in x
    ]
    return {
        "tests_passed": tests.returncode == 0,
        "tests_summary": lines[-1] if lines else "",
        "tests_ran": next((x for x in lines if x.startswith("Ran ")), "(no count)"),
        "first_error": errors[0] if errors else None,
    }


def totals(rows: list[dict[str, Any]], label: str) -> dict[str, Any]:
    uses = sum(r["uses"] for r in rows)
    shown = sum(r[label]["hits"] for r in rows)
    true = sum(r[label]["true"] for r in rows)
    false_py = sum(r[label]["false_in_py"] for r in rows)
    return {
        "false_in_py": false_py,
        "false_elsewhere": shown - true - false_py,
        "precision": true / shown if shown else 0.0,
        "recall": true / uses if uses else 1.0,
        "tokens": sum(r[label]["tokens"] for r in rows),
        "ms": sum(r[label]["ms"] for r in rows),
    }


def run(result: BenchResult) -> None:
    result.rounds = 1
    archive = sdist()
    with temp_dir("language") as tmp:
        root = unpack(archive, tmp / "lookups")
        lines = len((root / "more_itertools/more.py").read_text().splitlines())
        log(f"{archive.name}: more.py has {lines:,} lines")
        rows = asyncio.run(measure(root))
        renames = []
        for i, (rel, old, new) in enumerate(RENAMES):
            copy = unpack(archive, tmp / f"rename{i}")
            renamed = asyncio.run(rename(copy, rel, old, new))
            renamed.update(project_tests(copy))
            log(f"rename {old} -> {new}: {renamed['tests_ran']}: {renamed['tests_summary']}")
            renames.append(renamed)
    ref, grep = totals(rows, "references"), totals(rows, "grep")
    uses = sum(r["uses"] for r in rows)
    where = f"{FUNCTIONS} functions of more-itertools {VERSION}, {uses} uses in all"
    result.add(
        Figure(
            f"language: references, recall ({where})",
            round(ref["recall"] * 100, 1),
            "%",
            round(grep["recall"] * 100, 1),
            None,
            ">= grep's",
            ref["recall"] >= grep["recall"],
            note="floor: grep for the name (its 100-line cap included)",
        )
    )
    result.add(
        Figure(
            "language: references, precision",
            round(ref["precision"] * 100, 1),
            "%",
            round(grep["precision"] * 100, 1),
            None,
            note=f"grep's other hits: {grep['false_in_py']} lines of Python (docstrings, "
            f"comments, other things of the same name), {grep['false_elsewhere']} in other "
            "files (docs)",
        )
    )
    result.add(
        Figure(
            f"language: references, output tokens for the {FUNCTIONS} lookups",
            ref["tokens"],
            "tokens",
            grep["tokens"],
            round(ref["tokens"] / grep["tokens"], 3) if grep["tokens"] else None,
            "fewer than grep",
            ref["tokens"] < grep["tokens"],
            note="characters / 4",
        )
    )
    for renamed in renames:
        # The old name may stay in prose (docstrings, comments): the tests are the judge.
        ok = renamed["tests_passed"] and not renamed["is_error"]
        error = f" ({renamed['first_error']})" if renamed["first_error"] else ""
        result.add(
            Figure(
                f"language: rename {renamed['rename']} (used in "
                f"{len(renamed['files_using_it'])} files), the project's tests pass after",
                1.0 if ok else 0.0,
                "check",
                target="all",
                met=ok,
                note=f"{renamed['tests_ran']}: {renamed['tests_summary']}{error}",
            )
        )
    result.details = {
        "repository": f"{PACKAGE} {VERSION}",
        "references": ref,
        "grep": grep,
        "functions": rows,
        "renames": renames,
    }
