"""search: the grep and glob tools over a generated tree of 20,000 files, against the rg command
line on the same query.

The tools are called directly (their run() with a minimal ToolContext, as the loop calls them,
permission always granted), in one asyncio loop, after one untimed run of everything (warm page
cache). The baselines are rg processes started from the same loop, their whole output read:
* "rg command line": what a person types (`rg -n PATTERN`, `rg --files -g GLOB`), rg using every
  core;
* "rg, agentls' flags": the command line the tool runs (sorted output, hence one thread), as
  one process (the tool splits the walk between processes, one per core: see
  agentls.tools.support.ripgrep.walk_parts), to tell rg's own time from the tool's Python work.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path
from typing import Any

from bench.common import (
    BenchResult,
    Figure,
    log,
    median,
    paired_ratio,
    quiet,
    runs,
    summary,
    temp_dir,
)

FILES = 20_000
PACKAGES = 20
MODULES = 20  # per package; 50 files in each module directory

GREP_QUERIES = {
    # about 100 matching lines in as many files
    "grep selective": r"class Bench\w*Handler",
    # a match in every file (more than the tool's 10,000-line counting limit)
    "grep broad": r"def handle_\w+",
}
GLOB_QUERIES = {
    "glob selective": "**/test_*.py",  # 2,000 files
    "glob broad": "**/*.py",  # 18,000 files
}
RG_GLOB = {"**/test_*.py": "test_*.py", "**/*.py": "*.py"}


def generate(root: Path) -> None:
    rng = random.Random(20_000)
    k = 0
    for p in range(PACKAGES):
        for m in range(MODULES):
            directory = root / f"pkg_{p:02d}" / f"mod_{m:02d}"
            directory.mkdir(parents=True)
            for f in range(FILES // (PACKAGES * MODULES)):
                k += 1
                if k % 20 == 0:
                    (directory / f"notes_{f:03d}.md").write_text(f"# Notes {k}\n\nNothing here.\n")
                    continue
                if k % 20 == 10:
                    (directory / f"data_{f:03d}.json").write_text(f'{{"id": {k}}}\n')
                    continue
                name = f"test_{f:03d}.py" if f % 10 == 0 else f"file_{f:03d}.py"
                lines = [f'"""Module {k} of the generated benchmark tree."""', ""]
                if k % 200 == 1:
                    lines += [f"class Bench{k}Handler:", "    pass", ""]
                for j in range(4):
                    lines += [
                        f"def handle_{k}_{j}(request, value={rng.randint(0, 999)}):",
                        f"    # step {j}: scale and return",
                        f"    result = request.get('v', 0) * value + {j}",
                        "    return result",
                        "",
                    ]
                (directory / name).write_text("\n".join(lines))


class Ctx:
    """The ToolContext of a call, as agentls.session.agent.CallContext does it for the workspace
    root with the default permission rules (searches leave out what `read` may not show), every
    permission query granted."""

    def __init__(self, root: Path) -> None:
        from agentls.permission.rules import PermissionRules
        from agentls.tools.base import ReadLedger
        from agentls.verify.workspace import DiskWorkspace

        self.root = root.resolve()
        self.workspace = DiskWorkspace(self.root)
        self.ledger = ReadLedger()
        self.call_id = "bench"
        self.session_id = "bench"
        self.rules = PermissionRules.from_config(None)

    def is_outside(self, path: Path) -> bool:
        return path != self.root and self.root not in path.parents

    def relative(self, path: Path) -> str:
        if self.is_outside(path):
            return str(path)
        return path.relative_to(self.root).as_posix() or "."

    def resolve_path(self, raw: str | None, *, tool: str) -> Path:
        if not raw or raw.strip() in ("", "."):
            return self.root
        return Path(os.path.realpath(self.root / raw))

    def may_show(self, path: Path) -> bool:
        action = self.rules.evaluate(
            "read", self.relative(path), outside_workspace=self.is_outside(path)
        )
        return bool(action == "allow")

    def show_filter(self, base: Path) -> Any:
        return self.rules.read_filter(self.root, base)

    async def authorize(self, query: Any) -> None:
        return None

    async def authorize_path(self, tool: str, path: Path, title: str, params: Any) -> None:
        return None

    def progress(self, message: str) -> None:
        return None


async def _rg(args: list[str], cwd: Path) -> tuple[float, int]:
    from agentls.tools.support.ripgrep import rg_binary

    t = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        rg_binary(),
        *args,
        cwd=str(cwd),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        stdin=asyncio.subprocess.DEVNULL,
    )
    out, _ = await proc.communicate()
    return time.perf_counter() - t, out.count(b"\n")


async def measure(root: Path, n: int) -> dict[str, dict[str, Any]]:
    from agentls.tools.glob import GlobTool, file_name_glob, hidden_args
    from agentls.tools.grep import RG_GREP_FLAGS, GrepTool
    from agentls.tools.support.ripgrep import RG_BASE_FLAGS

    ctx = Ctx(root)
    grep, glob = GrepTool(), GlobTool()
    cases: dict[str, Any] = {}
    for name, pattern in GREP_QUERIES.items():
        params = grep.parse({"pattern": pattern})
        exact = [
            *RG_GREP_FLAGS,
            "-e",
            pattern,
            "--",
            ".",
        ]
        cases[name] = (grep, params, ["-n", pattern], exact, None)
    for name, pattern in GLOB_QUERIES.items():
        params = glob.parse({"pattern": pattern})
        exact = [*RG_BASE_FLAGS, "--files", "--sortr", "modified", *hidden_args(pattern)]
        name_glob = file_name_glob(pattern)
        if name_glob is not None:
            exact += ["--type-add", f"globbed:{name_glob[0]}", "--type", "globbed"]
        # glob lists the newest files first: the command line that gives the same answer.
        newest = ["--files", "--sortr", "modified", "-g", RG_GLOB[pattern]]
        cases[name] = (glob, params, ["--files", "-g", RG_GLOB[pattern]], exact, newest)

    out: dict[str, dict[str, Any]] = {}
    for round_ in range(n + 1):  # round 0 warms the page cache
        for name, (tool, params, cli, exact, newest) in cases.items():
            quiet()
            t = time.perf_counter()
            res = await tool.run(params, ctx)
            took = time.perf_counter() - t
            if res.is_error:
                raise RuntimeError(f"{name}: {res.output[:300]}")
            cli_s, cli_lines = await _rg(cli, root)
            exact_s, exact_lines = await _rg(exact, root)
            newest_s = (await _rg(newest, root))[0] if newest else None
            if round_ == 0:
                out[name] = {
                    "tool_s": [],
                    "rg_cli_s": [],
                    "rg_exact_s": [],
                    "rg_newest_s": [],
                    "matches": res.metadata,
                    "rg_cli_lines": cli_lines,
                }
                continue
            out[name]["tool_s"].append(took)
            out[name]["rg_cli_s"].append(cli_s)
            out[name]["rg_exact_s"].append(exact_s)
            if newest_s is not None:
                out[name]["rg_newest_s"].append(newest_s)
    return out


# A round takes well under a second, and one stall of the shared host (20 to 30 ms, as long as a
# search) in the tool's or rg's timing of a round moves a median of 5: medians of 15 at least.
SEARCH_ROUNDS = 15


def run(result: BenchResult) -> None:
    n = max(runs(), SEARCH_ROUNDS)
    result.rounds = n
    with temp_dir("search") as tmp:
        root = tmp / "tree"
        t = time.perf_counter()
        generate(root)
        log(f"generated {FILES:,} files in {time.perf_counter() - t:.1f} s")
        data = asyncio.run(measure(root, n))
    for name, d in data.items():
        tool_ms = median(d["tool_s"]) * 1000
        cli_ms = median(d["rg_cli_s"]) * 1000
        r = paired_ratio(d["tool_s"], d["rg_cli_s"])
        meta = d["matches"]
        found = f"{meta['matches']:,} matches" if "matches" in meta else f"{meta['count']:,} files"
        result.add(
            Figure(
                f"search: {name} ({found})",
                tool_ms,
                "ms",
                cli_ms,
                r,
                "<= 1.3x",
                r <= 1.3,
                note=f"rg with the tool's own flags: {median(d['rg_exact_s']) * 1000:.0f} ms; "
                f"rg command line printed {d['rg_cli_lines']:,} lines",
            )
        )
        if d["rg_newest_s"]:
            result.add(
                Figure(
                    f"search: {name}, against rg listing them newest first",
                    tool_ms,
                    "ms",
                    median(d["rg_newest_s"]) * 1000,
                    paired_ratio(d["tool_s"], d["rg_newest_s"]),
                    note="`rg --files --sortr modified -g GLOB`: the command line that gives "
                    "the tool's answer (the most recently modified first); rg then stats every "
                    "file and walks on one thread",
                )
            )
    result.details = {
        "files": FILES,
        "queries": {**GREP_QUERIES, **GLOB_QUERIES},
        **{
            name: {
                key: summary([v * 1000 for v in d[key]], 2)
                for key in ("tool_s", "rg_cli_s", "rg_exact_s", "rg_newest_s")
                if d[key]
            }
            for name, d in data.items()
        },
    }
