"""The Verifier around a write: own checks before and after, then the trusted verifyCommands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.config import Settings
from agentls.verify.edit import Verifier


async def test_an_edit_that_breaks_python(tmp_path: Path) -> None:
    verifier = Verifier(tmp_path)
    path = tmp_path / "pkg" / "m.py"
    before = await verifier.before(path, "def f():\n    return 1\n")
    published: list[list[dict[str, Any]]] = []
    summary = await verifier.after(path, "def f(:\n    return 1\n", before, published.append)
    assert summary.startswith(
        "Diagnostics (agentls syntax check only: not names, types or tests): 1 new problem(s) in pkg/m.py after this edit:\n  line 1:"
    )
    assert "SyntaxError" in summary
    assert [d["source"] for d in published[0]] == ["agentls"]


async def test_an_edit_that_fixes_it_says_so(tmp_path: Path) -> None:
    verifier = Verifier(tmp_path)
    path = tmp_path / "c.json"
    before = await verifier.before(path, '{"a": 1,}')
    assert len(before) == 1
    summary = await verifier.after(path, '{"a": 1}', before)
    assert summary == (
        "Diagnostics (agentls syntax check only: not names, types or tests): no syntax errors in c.json. "
        "It fixed 1 problem(s) the file had before."
    )


async def test_a_new_file_has_no_before(tmp_path: Path) -> None:
    verifier = Verifier(tmp_path)
    assert await verifier.before(tmp_path / "n.py", None) == []


async def test_verify_commands_of_the_settings_in_force(tmp_path: Path) -> None:
    settings = Settings()
    verifier = Verifier(tmp_path, lambda: settings)
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    assert not verifier.applies_to(path)
    settings = Settings(verify_commands={"*.txt": "wc -l < {path}"})
    assert verifier.applies_to(path)
    summary = await verifier.after(path, "hello\n", [])
    assert summary.endswith(f"\nCheck `wc -l < {path}` passed:\n1")


def test_wait_follows_the_settings(tmp_path: Path) -> None:
    assert Verifier(tmp_path).wait_s == Settings().verify_wait_s
    assert Verifier(tmp_path, lambda: Settings(verify_wait_s=0.25)).wait_s == 0.25


async def test_an_undefined_name_is_not_called_no_new_errors(tmp_path: Path) -> None:
    # The syntax check cannot see it: the result says what it checked, never "no new errors".
    verifier = Verifier(tmp_path)
    path = tmp_path / "app.py"
    before = await verifier.before(path, "def f():\n    return 1\n")
    summary = await verifier.after(path, "def f():\n    return undefined_name\n", before)
    assert "no new errors" not in summary
    assert summary == (
        "Diagnostics (agentls syntax check only: not names, types or tests): "
        "no syntax errors in app.py."
    )
