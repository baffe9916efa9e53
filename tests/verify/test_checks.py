"""agentls' own checks: Python syntax, JSON syntax, nothing for other files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.verify.checks import has_own_checks, own_checks


def test_python_syntax_error_is_an_error_at_its_line() -> None:
    [problem] = own_checks(Path("a.py"), "x = 1\ndef f(:\n")
    assert problem["severity"] == 1 and problem["source"] == "agentls"
    assert problem["range"]["start"]["line"] == 1
    assert problem["message"].startswith("SyntaxError:")


def test_valid_python_and_stubs_have_no_problems() -> None:
    assert own_checks(Path("a.py"), "def f():\n    return 1\n") == []
    assert own_checks(Path("a.pyi"), "def f() -> int: ...\n") == []
    assert own_checks(Path("A.PY"), "x = (\n")  # the suffix in any case


def test_python_with_a_null_byte() -> None:
    [problem] = own_checks(Path("a.py"), "x = 1\0\n")
    assert problem["range"]["start"] == {"line": 0, "character": 0}


def test_json_syntax() -> None:
    assert own_checks(Path("c.json"), '{"a": [1, 2]}') == []
    [problem] = own_checks(Path("c.json"), '{\n  "a": 1,\n}')
    assert problem["message"].startswith("JSON:")
    assert problem["range"]["start"]["line"] == 2


@pytest.mark.parametrize("name", ["notes.txt", "Makefile", "x.js", "data.yaml"])
def test_other_files_are_not_checked(name: str) -> None:
    assert not has_own_checks(Path(name))
    assert own_checks(Path(name), "def f(:\n{,") == []


def test_which_files_are_checked() -> None:
    assert has_own_checks(Path("a.py")) and has_own_checks(Path("s.pyi"))
    assert has_own_checks(Path("c.json"))
