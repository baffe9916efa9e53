"""The pieces of an edit's reach that need no language server: which lines an edit changed,
which symbols that touches, and agentls' own check of a Python definition's uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.verify.pycalls import module_names, python_definitions, use_problems
from agentls.verify.reach import (
    _flatten,
    changed_lines,
    changed_python_definitions,
    describe_reach,
    touched_symbols,
)
from agentls.workspace.protocol import Reach


def _symbol(name: str, kind: int, start: int, end: int, children: list[Any]) -> dict[str, Any]:
    rng = {"start": {"line": start, "character": 0}, "end": {"line": end, "character": 0}}
    sel = {"start": {"line": start, "character": 4}, "end": {"line": start, "character": 5}}
    return {"name": name, "kind": kind, "range": rng, "selectionRange": sel, "children": children}


SYMBOLS = [
    _symbol("C", 5, 0, 6, [_symbol("m", 6, 1, 3, [_symbol("local", 13, 2, 2, [])])]),
    _symbol("f", 12, 8, 9, []),
]


def test_changed_lines() -> None:
    assert changed_lines("a\nb\nc\n", "a\nB\nc\n") == (1, 2)
    assert changed_lines("a\nc\n", "a\nb\nc\n") == (1, 1)  # an insertion before line 1
    assert changed_lines("a\nb\n", "a\n") == (1, 2)


def test_the_innermost_symbol_not_a_local_is_the_changed_definition() -> None:
    flat = _flatten(SYMBOLS, [])
    assert [d.qualname for d in touched_symbols(flat, 2, 3)] == ["C.m"]  # a local of m: m
    assert [d.qualname for d in touched_symbols(flat, 5, 6)] == ["C"]
    assert [d.qualname for d in touched_symbols(flat, 7, 7)] == []  # inserted between the two
    assert [d.qualname for d in touched_symbols(flat, 2, 9)] == ["C.m", "f"]
    # A range ending at a line's start ends on the line before: line 3 is after m.
    assert [d.qualname for d in touched_symbols(flat, 3, 4)] == ["C"]


def test_python_names_still_bound() -> None:
    text = "from .other import greet\nVALUE, (a, b) = 1, (2, 3)\nimport os.path\n"
    assert module_names(text) == {"greet", "VALUE", "a", "b", "os"}


def test_python_signatures_changed_or_removed() -> None:
    old = (
        "def f(a):\n    pass\n\nclass C:\n    def m(self, x):\n        pass\n\ndef g():\n    pass\n"
    )
    new = "def f(a):\n    return 1\n\nclass C:\n    def m(self, y):\n        pass\n"
    assert [d.qualname for d in changed_python_definitions(old, new)] == ["C.m", "g"]


def test_own_check_of_uses() -> None:
    module = python_definitions("class C:\n    def m(self, y, *, z=1):\n        pass\n")
    assert module is not None
    user = "import lib\n\nlib.C().m(x=1)\nlib.C().m(2, z=3)\nlib.C().m(*args)\nC.m(c, 2)\n"
    uses = [(2, 8), (3, 8), (4, 8), (5, 2)]
    problems = use_problems(user, uses, module["C.m"], "m", "lib.py")
    assert [p["range"]["start"]["line"] for p in problems] == [2]
    assert "C.m()" in problems[0]["message"] and "'y'" in problems[0]["message"]
    decorated = python_definitions("@command\ndef cli(verbose):\n    pass\n")
    assert decorated is not None and decorated["cli"].signature is None
    assert use_problems("cli()\n", [(0, 0)], decorated["cli"], "cli", "lib.py") == []
    gone = use_problems("from lib import m\n", [(0, 16)], None, "m", "lib.py")
    assert [p["message"] for p in gone] == ["'m' is no longer defined in lib.py"]
    # Columns in UTF-16 units (LSP's), not the AST's UTF-8 bytes.
    wide = use_problems('x = "é😀"; m()\n', [(0, 11)], None, "m", "lib.py")
    assert [p["range"]["start"]["character"] for p in wide] == [11]


def test_files_the_model_may_not_read_are_left_out() -> None:
    error = {"range": {"start": {"line": 4}}, "severity": 1, "message": "broken"}
    reach = Reach(["f"], 2, [(Path("/w/a.py"), [error]), (Path("/w/.env.py"), [error])])
    text = describe_reach(reach, lambda p: p.name, lambda p: not p.name.startswith(".env"))
    assert text.splitlines() == [
        "Other files using what this edit changed (f): 1 new error(s) in 1 file(s) "
        "(1 file(s) you may not read left out):",
        "  a.py:",
        "    line 5: error broken",
    ]
