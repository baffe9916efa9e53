"""`make demo`: the scripted model fixes a failing test in a copy of the bundled sample project.

The agent runs in `agentls serve`, the language server, driven over LSP by the demo's own minimal
client (agentls.demo.client): it applies the server's workspace edits to disk, approves each ask,
and prints the streamed events. The model is the built-in scripted one: offline, no API key.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path


def _banner(title: str) -> None:
    print(f"\n===== {title} " + "=" * max(0, 60 - len(title)), flush=True)


def _tests(project: Path) -> int:
    proc = subprocess.run(
        [sys.executable, "-m", "unittest", "-v"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    print(proc.stdout + proc.stderr, end="", flush=True)
    return proc.returncode


def main() -> int:
    sample = resources.files("agentls.demo") / "sample"
    with tempfile.TemporaryDirectory(prefix="agentls-demo-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        for name in ("calc.py", "test_calc.py"):
            (project / name).write_text(
                (sample / name).read_text(encoding="utf-8"), encoding="utf-8"
            )
        before = (project / "calc.py").read_text(encoding="utf-8")
        env = dict(os.environ, AGENTLS_DATA_DIR=str(Path(tmp) / "data"))

        _banner(f"sample project copied to {project}")
        _banner("tests before")
        failed_before = _tests(project) != 0

        _banner("the agent, in agentls serve, driven over LSP")
        print(
            "Model: scripted:demo, the built-in scripted model. It plays a fixed scenario offline\n"
            "(no network, no API key); it is not a real model.\n"
            "The demo starts `agentls serve` and talks LSP to it with its own small client\n"
            "(agentls.demo.client): edits arrive as workspace/applyEdit and are written to disk,\n"
            "and each permission request (edit and bash ask by default) is approved once.\n",
            flush=True,
        )
        from agentls.demo.client import fix_with_agent

        turn_ok = asyncio.run(fix_with_agent(project, "Fix the failing test.", sys.stdout, env))

        _banner("diff")
        after = (project / "calc.py").read_text(encoding="utf-8")
        diff = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            "a/calc.py",
            "b/calc.py",
        )
        print("".join(diff) or "(no change)", end="", flush=True)

        _banner("tests after")
        passed_after = _tests(project) == 0
        shutil.rmtree(project / "__pycache__", ignore_errors=True)

    _banner("result")
    ok = turn_ok and failed_before and passed_after
    print("The demo fixed the failing test." if ok else "The demo did NOT fix the test.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
