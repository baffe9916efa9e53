"""finish_gate: what the finish gate (session/finish_gate.py) adds to the end of a turn: the
diagnostics of the files the turn changed and of those using what it changed, taken again
(verify/turn_edits.py Recheck) through the edit pipeline, as `agentls run` has it (DiskWorkspace,
pyright from `languageServers`, warm).

* "after an edit reaching 20 files": a.py's function renamed, 20 other files importing it; the
  gate takes 21 files' diagnostics again (pyright's, for the versions written);
* "no file changed": a turn that edited nothing (nothing is taken, nothing waited for).
The floor of the first is the edit itself (write_text: the diagnostics before and after, the reach).
pyright is installed by `make pyright-deps` (tests/language/pyright); without it, no figures.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from bench.common import BenchResult, Figure, log, median, runs, summary, temp_dir

PYRIGHT = (
    Path(__file__).resolve().parent.parent
    / "tests/language/pyright/node_modules/.bin/pyright-langserver"
)
USERS = 20
A = "def compute(x):\n    return x * 2\n"
USE = "from a import compute\n\n\ndef run_{n}():\n    return compute({n})\n"


async def _measure(root: Path, n: int) -> dict[str, list[float]]:
    from agentls.config import Settings
    from agentls.verify.workspace import DiskWorkspace

    settings = Settings.model_validate(
        {
            "languageServers": {
                "python": {"command": [str(PYRIGHT), "--stdio"], "extensions": [".py"]}
            }
        }
    )
    ws = DiskWorkspace(root, lambda: settings)
    out: dict[str, list[float]] = {"edit": [], "gate": [], "idle": [], "files": []}
    try:
        first = root / "use_0.py"
        await ws.languages.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": first.as_uri()}}, first
        )
        a = root / "a.py"
        for i in range(n):
            session = f"s{i}"
            renamed = A.replace("compute", "calculate")
            t = time.perf_counter()
            await ws.write_text(a, renamed, A, session)
            out["edit"].append(time.perf_counter() - t)
            t = time.perf_counter()
            checked = await ws.recheck(session)
            out["gate"].append(time.perf_counter() - t)
            out["files"].append(float(sum(1 for c in checked if c.after is not None)))
            t = time.perf_counter()
            await ws.recheck(f"idle{i}")
            out["idle"].append(time.perf_counter() - t)
            await ws.write_text(a, A, renamed, "back")  # as it was, for the next round
    finally:
        await ws.languages.aclose()
    return out


def run(result: BenchResult) -> None:
    if not PYRIGHT.exists():
        log("pyright is not installed (make pyright-deps): no figures")
        return
    n = runs()
    result.rounds = n
    with temp_dir("finish_gate") as tmp:
        root = (tmp / "ws").resolve()
        root.mkdir()
        (root / "a.py").write_text(A)
        for u in range(USERS):
            (root / f"use_{u}.py").write_text(USE.format(n=u))
        data = asyncio.run(_measure(root, n))
    gate, edit = median(data["gate"]) * 1000, median(data["edit"]) * 1000
    files = int(min(data["files"]))
    result.add(
        Figure(
            f"finish gate: after an edit reaching {USERS} files ({files} checked, pyright)",
            gate,
            "ms",
            floor=edit,
            ratio=gate / edit if edit else None,
            note="floor: the edit itself (write_text, its reach included)",
        )
    )
    result.add(
        Figure(
            "finish gate: a turn that changed no file",
            median(data["idle"]) * 1000,
            "ms",
            target="nothing taken, no wait",
        )
    )
    result.details = {
        k: summary([v * 1000 for v in vals], 3) for k, vals in data.items() if k != "files"
    }
