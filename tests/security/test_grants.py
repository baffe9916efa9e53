"""An "always" grants exactly what the question shows: a path grant is that literal path (never a
glob, never `~`, never outside the workspace); a bash grant is at most a command name and its
subcommand, or the exact line for programs whose arguments are code or another command."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.permission.grants import grant_for
from agentls.permission.rules import PermissionRules
from tests.security.conftest import SecurityFigures

# A file name that looks like a glob or a home directory grants that one name only.
ODD_NAMES = ["**", "*", "./~", "~", "~/x", "[a]", "src/?", "src/**", "a/*/b", "docs", ".", "x\nb"]
# Paths the grant must not reach.
OTHERS = [
    "a.py",
    "src/a.py",
    "docs/readme.md",
    "sub/**",
    "b",
    "[a]x",
    "src/x",
    "a/c/b",
    "/etc/passwd",
]


@pytest.mark.parametrize("name", ODD_NAMES)
@pytest.mark.parametrize("tool", ["write", "edit", "read"])
def test_path_grant_is_one_literal_path(
    security_figures: SecurityFigures,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    name: str,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    base = PermissionRules.from_config({"read": "ask"})
    with security_figures.attempt("wide always grant"):
        grant = grant_for(tool, name)
        assert grant is not None
        rules = base.extended(grant.rules)
        assert rules.evaluate(tool, name) == "allow"
        for other in OTHERS:
            outside = other.startswith("/")
            expected = "deny" if outside else "ask"
            assert rules.evaluate(tool, other, outside_workspace=outside) == expected, other
        assert rules.evaluate(tool, str(tmp_path), outside_workspace=True) == "deny"
        assert rules.evaluate(tool, str(tmp_path / "x"), outside_workspace=True) == "deny"
        # the path filter grep/glob use agrees
        assert rules.path_filter(tool)(name) is True
        assert rules.path_filter(tool)("a.py") is False


def test_path_grant_labels() -> None:
    grant = grant_for("edit", "src/app.py")
    assert grant is not None and grant.label == "Always allow edits of src/app.py"
    grant = grant_for("write", "notes/**")
    assert grant is not None and grant.label == "Always allow writes of notes/**"
    grant = grant_for("write", "a\nb")
    assert grant is not None and grant.label == 'Always allow writes of "a\\nb"'


@pytest.mark.parametrize("subject", ["/etc/passwd", "/home/u/.bashrc", "../x", "a/../../x", ""])
def test_no_path_grant_outside_the_workspace(
    security_figures: SecurityFigures, subject: str
) -> None:
    with security_figures.attempt("wide always grant"):
        assert grant_for("write", subject, outside_workspace=subject.startswith("/")) is None
        assert grant_for("read", subject, outside_workspace=True) is None


# (the line answered "always", its label, lines it must then allow, lines that must still ask)
BASH: list[tuple[str, str, list[str], list[str]]] = [
    (
        "git status --porcelain",
        "Always allow `git status` commands",
        ["git status", "git status -s"],
        ["git push", "git -c core.pager=rm status", "git"],
    ),
    (
        "ls -la",
        "Always allow `ls` commands",
        ["ls", "ls src"],
        ["lsof", "./ls", "ls; rm x", "ls > f"],
    ),
    ("git status | wc -l", "Always allow `git status` and `wc` commands", ["wc -c x"], ["git log"]),
    (
        "bash -c 'echo hi'",
        "Always allow exactly `bash -c 'echo hi'`",
        ["bash -c 'echo hi'"],
        ["bash -c 'touch x'", "bash -c 'echo hi'; touch x", "bash -c echo hi"],
    ),
    (
        "python3 -c 'print(1)'",
        "Always allow exactly `python3 -c 'print(1)'`",
        ["python3 -c 'print(1)'"],
        ["python3 -c 'import os'", "python3 x.py"],
    ),
    (
        "env LANG=C echo hi",
        "Always allow exactly `env LANG=C echo hi`",
        ["env LANG=C echo hi"],
        ["env LANG=C touch x", "echo hi"],
    ),
    (
        "echo f | xargs cat",
        "Always allow exactly `echo f | xargs cat`",
        ["echo f | xargs cat"],
        ["echo f | xargs rm", "xargs cat"],
    ),
    ("sudo ls", "Always allow exactly `sudo ls`", ["sudo ls"], ["sudo rm x"]),
    ("ssh host ls", "Always allow exactly `ssh host ls`", ["ssh host ls"], ["ssh host rm x"]),
    ("node -e '1'", "Always allow exactly `node -e '1'`", ["node -e '1'"], ["node -e '2'"]),
    ("perl -e 1", "Always allow exactly `perl -e 1`", [], ["perl -e 2"]),
    ("ruby -e 1", "Always allow exactly `ruby -e 1`", [], ["ruby -e 2"]),
    ("eval 'ls'", "Always allow exactly `eval 'ls'`", [], ["eval 'rm x'"]),
    ("nohup make", "Always allow exactly `nohup make`", [], ["nohup rm x"]),
    (
        "find . -name x",
        "Always allow exactly `find . -name x`",
        [],
        ["find . -delete", "find . -exec rm {} ;"],
    ),
    ("npm test", "Always allow `npm test` commands", ["npm test -- -x"], ["npm install evil"]),
    (
        "echo hi > notes.txt",
        "Always allow `echo` commands and writes of notes.txt",
        ["echo bye > notes.txt", "echo x"],
        ["echo hi > other.txt"],
    ),
]


@pytest.mark.parametrize(("line", "label", "allowed", "asked"), BASH)
def test_bash_grant_is_what_it_says(
    security_figures: SecurityFigures,
    tmp_path: Path,
    line: str,
    label: str,
    allowed: list[str],
    asked: list[str],
) -> None:
    base = PermissionRules.from_config(None)
    with security_figures.attempt("wide always grant"):
        grant = grant_for("bash", line, root=tmp_path)
        assert grant is not None
        assert grant.label == label
        rules = base.extended(grant.rules)
        assert rules.evaluate("bash", line, root=tmp_path) == "allow"
        for other in allowed:
            assert rules.evaluate("bash", other, root=tmp_path) == "allow", other
        for other in asked:
            assert rules.evaluate("bash", other, root=tmp_path) == "ask", other


@pytest.mark.parametrize(
    "line",
    [
        "x=rm; $x",
        "$(echo ls)",
        "ls > $f",
        "ls > ~/.bashrc",
        "ls > /tmp/x",
        "ls; {r,}m",
        "ls\0",
        'bash -c "$y"',
        "PATH=. ls",
    ],
)
def test_no_bash_grant_when_unsure(
    security_figures: SecurityFigures, tmp_path: Path, line: str
) -> None:
    with security_figures.attempt("wide always grant"):
        assert grant_for("bash", line, root=tmp_path) is None


def test_other_tools_get_the_tool() -> None:
    grant = grant_for("mcp__docs__search", "anything")
    assert grant is not None and grant.label == "Always allow `mcp__docs__search` calls"
    # webfetch has its own: the host shown (tests/tools/test_webfetch.py).
    webfetch = grant_for("webfetch", "docs.python.org")
    assert webfetch is not None
    assert webfetch.label == "Always allow web fetches from docs.python.org"
