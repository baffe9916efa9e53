"""sandbox: what the bash sandbox costs a command (tools/support/sandbox.py prepare), and a whole
sandboxed `true` against the same command without it.

* "plan, first": the first prepare() of a process, which lists the secret files of the folders of
  $HOME it shows (this machine's: PATH's folders and the toolchains there, e.g. ~/.pyenv) and of
  the workspace;
* "plan, cached": every later call while those lists are fresh (HOME_SCAN_TTL_S): only the
  workspace is scanned;
* "command": `true` through bwrap with that plan, against `true` run directly.

The workspace is a generated tree of 2,000 files. Skipped (no figures) without a working bwrap.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from bench.common import BenchResult, Figure, log, median, runs, summary, temp_dir


def _tree(root: Path) -> None:
    for p in range(20):
        folder = root / f"pkg_{p:02d}"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"mod_{f:03d}.py").write_text(f"x = {f}\n")
    (root / ".env").write_text("TOKEN=x\n")


async def _measure(root: Path, n: int) -> dict[str, list[float]]:
    from agentls.tools.support import sandbox

    policy = sandbox.SandboxPolicy(mode="required")
    out: dict[str, list[float]] = {"first": [], "cached": [], "sandboxed": [], "direct": []}
    for _ in range(n):
        sandbox._home_scans.clear()
        t = time.perf_counter()
        await sandbox.prepare(policy, root)
        out["first"].append(time.perf_counter() - t)
        t = time.perf_counter()
        plan = await sandbox.prepare(policy, root)
        out["cached"].append(time.perf_counter() - t)
        assert plan is not None
        for key, argv in (("sandboxed", [*plan.prefix, "true"]), ("direct", ["true"])):
            t = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(*argv, cwd=root)
            await proc.wait()
            out[key].append(time.perf_counter() - t)
    assert plan is not None
    out["binds"] = [float(len(plan.prefix))]
    return out


def run(result: BenchResult) -> None:
    if shutil.which("bwrap") is None:
        log("bwrap is not installed: no figures")
        return
    n = runs()
    result.rounds = n
    with temp_dir("sandbox") as tmp:
        root = tmp / "ws"
        _tree(root)
        data = asyncio.run(_measure(root, n))
    first, cached = median(data["first"]) * 1000, median(data["cached"]) * 1000
    sandboxed, direct = median(data["sandboxed"]) * 1000, median(data["direct"]) * 1000
    result.add(
        Figure(
            "sandbox: plan, first call ($HOME's shown folders listed)",
            first,
            "ms",
            note="once a process, and again after HOME_SCAN_TTL_S",
        )
    )
    result.add(
        Figure(
            "sandbox: plan, each later call (the workspace's 2,000 files listed)",
            cached,
            "ms",
            target="no walk of $HOME",
            met=cached < first,
        )
    )
    result.add(
        Figure(
            "sandbox: `true` in bwrap",
            sandboxed,
            "ms",
            floor=direct,
            ratio=sandboxed / direct if direct else None,
            note=f"{int(data['binds'][0])} words of bwrap options",
        )
    )
    result.details = {
        k: summary([v * 1000 for v in vals], 2) for k, vals in data.items() if k != "binds"
    }
    result.details["bwrap_words"] = int(data["binds"][0])
