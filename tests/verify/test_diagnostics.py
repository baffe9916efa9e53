"""Before and after an edit: the new problems, the fixed ones, and their summary."""

from __future__ import annotations

from typing import Any

from agentls.verify.checks import diagnostic
from agentls.verify.diagnostics import MAX_REPORTED, describe, fixed_problems, new_problems


def diag(message: str, severity: int = 1, line: int = 0, source: str = "lint") -> dict[str, Any]:
    return {**diagnostic(line, 0, message, source), "severity": severity}


def test_new_problems_are_those_the_before_did_not_have() -> None:
    old = diag("unused import")
    moved = diag("unused import", line=7)  # the same problem on another line: not new
    new = diag("undefined name x", line=3)
    hint = diag("could be simpler", severity=4)
    assert new_problems([old], [moved, new, hint]) == [new]
    assert new_problems([], [diag("w", severity=2)]) == [diag("w", severity=2)]


def test_fixed_problems_are_those_the_after_no_longer_has() -> None:
    gone, kept = diag("syntax"), diag("style", severity=2)
    assert fixed_problems([gone, kept], [kept]) == [gone]
    assert fixed_problems([diag("info", severity=3)], []) == []


def test_describe_no_new_problems() -> None:
    assert describe("a.py", [], "agentls checks") == (
        "Diagnostics (agentls checks): no new errors or warnings in a.py."
    )


def test_describe_a_fix() -> None:
    text = describe("a.py", [], "agentls checks", fixed=[diag("SyntaxError: x")])
    assert text == (
        "Diagnostics (agentls checks): no new errors or warnings in a.py. "
        "It fixed 1 problem(s) the file had before."
    )


def test_describe_new_problems_one_line_each() -> None:
    text = describe(
        "src/a.py",
        [diag("undefined name\nmore detail", line=2), diag("shadowed", severity=2, source="")],
        "editor",
    )
    assert text.splitlines() == [
        "Diagnostics (editor): 2 new problem(s) in src/a.py after this edit (lint: 1 error):",
        "  line 3: error [lint] undefined name",
        "  line 1: warning shadowed",
    ]


def test_describe_cuts_a_long_list() -> None:
    many = [diag(f"problem {i}", line=i) for i in range(MAX_REPORTED + 5)]
    lines = describe("a.py", many, "editor").splitlines()
    assert len(lines) == 1 + MAX_REPORTED + 1
    assert lines[-1] == "  ... and 5 more"


def test_describe_names_each_checker_and_what_it_found() -> None:
    problems = [
        diag("x is not defined", source="pyright"),
        diag("y is not defined", source="pyright", line=4),
        diag("unused import", severity=2, source="ruff"),
    ]
    header = describe("a.py", problems, "editor").splitlines()[0]
    assert header == (
        "Diagnostics (editor): 3 new problem(s) in a.py after this edit "
        "(pyright: 2 errors; ruff: 1 warning):"
    )
