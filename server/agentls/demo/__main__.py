"""`make demo`: the scripted model fixes a failing test in a copy of the bundled sample project."""

from __future__ import annotations

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
        os.environ["AGENTLS_DATA_DIR"] = str(Path(tmp) / "data")

        _banner(f"sample project copied to {project}")
        _banner("tests before")
        failed_before = _tests(project) != 0

        _banner("agentls run --model scripted:demo --yes (the built-in scripted model, offline)")
        from agentls.cli.main import main as cli_main

        code = cli_main(
            [
                "run",
                "--cwd",
                str(project),
                "--model",
                "scripted:demo",
                "--yes",
                "Fix the failing test.",
            ]
        )

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
    ok = code == 0 and failed_before and passed_after
    print("The demo fixed the failing test." if ok else "The demo did NOT fix the test.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
