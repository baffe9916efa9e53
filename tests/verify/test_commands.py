"""verifyCommands: which run for a path, how they run, and what they report."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentls.verify.commands import matching_commands, run_verify_commands


def test_matching_by_relative_path_or_name(tmp_path: Path) -> None:
    commands = {"src/*.py": "lint {path}", "*.json": "jq . {path}", "*.md": "never"}
    path = tmp_path / "src" / "a b.py"
    assert matching_commands(path, tmp_path, commands) == [f"lint '{path}'"]
    deep = tmp_path / "x" / "y" / "c.json"
    assert matching_commands(deep, tmp_path, commands) == [f"jq . {deep}"]
    assert matching_commands(path, tmp_path, None) == []


async def test_a_passing_and_a_failing_command(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    commands = {
        "*.py": f"{sys.executable} -c \"print(open('a.py').read().strip())\"",
        "a.*": "echo broken >&2; exit 3",
    }
    report = await run_verify_commands(target, tmp_path, commands)
    first, second = report.split("\nCheck ")
    assert first.endswith("passed:\nx = 1")  # run in the root: a relative path works
    assert second == "`echo broken >&2; exit 3` failed (exit 3):\nbroken"


async def test_no_matching_command_reports_nothing(tmp_path: Path) -> None:
    assert await run_verify_commands(tmp_path / "a.txt", tmp_path, {"*.py": "false"}) == ""


async def test_commands_do_not_see_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    report = await run_verify_commands(
        tmp_path / "a.py", tmp_path, {"*": "echo key=${ANTHROPIC_API_KEY:-none}"}
    )
    assert report.endswith("passed:\nkey=none")
