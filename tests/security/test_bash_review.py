"""The security review's bash findings: code run through arithmetic evaluation of array subscripts
and indirect expansion, environment variables given to a command (an allowlist now), and wrappers
the analysis does not know carrying a denied command past a deny rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.permission.rules import PermissionRules
from tests.security.conftest import SecurityFigures

ALLOW = {"bash": {"echo": "allow", "printf": "allow", "test": "allow", "ls": "allow"}}
ALLOW_GIT = {"bash": {"git": "allow", "ls": "allow", "echo": "allow", "npm": "allow"}}
DENY_RM = {"bash": {"*": "allow", "rm": "deny"}}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    return work


ARITHMETIC = [
    "x='a[$(touch /tmp/y3)]'; echo ${!x}",
    "a=(1); x='a[$(touch /tmp/y4)]'; echo $((x))",
    "printf -v 'a[$(touch /tmp/y2)]' x",
    "test -v 'a[$(touch /tmp/y1)]'",
    "[ -v 'a[$(touch /tmp/y1)]' ]",
    "[[ -v 'a[$(touch /tmp/y1)]' ]]",
    "printf -v PATH /tmp/evil; ls",
    "printf -vPATH /tmp/evil; ls",
    "echo ${!x}",
    "echo $[x+1]",
    "echo $(( $x + 1 ))",
    "((x)); ls",
    "let x; ls",
    "x='a[$(touch y)]'; [[ $x -eq 1 ]]",
    "read 'a[$(touch y)]' < /dev/null",
    "read -a 'a[$(touch y)]' < /dev/null",
    "read -r PATH < /dev/null; ls",
    "mapfile 'a[$(touch y)]' < /dev/null",
    "mapfile -C 'touch y' -c 1 a < /dev/null",
    "readarray PATH < /dev/null",
    "declare 'a[$(touch y)]=1'",
    "declare -n r=PATH; r=/tmp/evil; ls",
    "local -n r=x",
    "typeset PATH",
    "echo ${a[$i]}",
    "echo ${x:i}",
    "unset 'a[$(touch y)]'",
    "a[$(touch y)]=1",
]


@pytest.mark.parametrize("line", ARITHMETIC)
def test_arithmetic_and_variable_names_ask(
    security_figures: SecurityFigures, root: Path, line: str
) -> None:
    rules = PermissionRules.from_config(ALLOW)
    with security_figures.attempt("bash arithmetic or variable-name code"):
        assert rules.decide_bash(line, root=root).action == "ask"


@pytest.mark.parametrize("line", ARITHMETIC[:8])
def test_arithmetic_denies_with_a_deny_rule(
    security_figures: SecurityFigures, root: Path, line: str
) -> None:
    rules = PermissionRules.from_config(DENY_RM)
    with security_figures.attempt("bash arithmetic or variable-name code"):
        assert rules.decide_bash(line, root=root).action == "deny"


VARIABLES = [
    "XDG_CONFIG_HOME=evilx git status",
    "GIT_TRACE=/root/.bashrc git status",
    "GIT_EXTERNAL_DIFF='touch x #' git diff",
    "env GIT_EXTERNAL_DIFF='touch x #' git diff",
    "env XDG_CONFIG_HOME=evil git status",
    "FOO=1 git status",
    "PATH=/tmp/evil; ls",
    "PATH=/tmp/evil ls",
    "export FOO=1; git status",
    "export GIT_EXTERNAL_DIFF='touch x #'; git diff",
    "GIT_EXTERNAL_DIFF=x; export GIT_EXTERNAL_DIFF; git diff",
    "declare -x XDG_CONFIG_HOME=evil; git status",
    "XDG_CONFIG_HOME=evil; git status",
    "GIT_DIFF_OPTS=x; git diff",
    "set -a; EVIL=1; git status",
    "sudo GIT_EXTERNAL_DIFF=x git diff",
]


@pytest.mark.parametrize("line", VARIABLES)
def test_variables_given_to_commands_ask(
    security_figures: SecurityFigures, root: Path, line: str
) -> None:
    rules = PermissionRules.from_config(ALLOW_GIT)
    with security_figures.attempt("bash environment variable"):
        assert rules.decide_bash(line, root=root).action == "ask"


WRAPPED = [
    "flock /tmp/l rm f",
    "flock /tmp/l -c 'rm f'",
    "flock -w 3 /tmp/l rm f",
    "strace -o /dev/null rm f",
    "ltrace rm f",
    "unshare rm f",
    "unshare -r rm f",
    "chroot / rm f",
    "script -qc 'rm f' /dev/null",
    "script -c 'rm f'",
    "sg root -c 'rm f'",
    "sg root 'rm f'",
    "setsid rm f",
    "setpriv --reuid=1 rm f",
    "runuser -u nobody rm f",
    "su root -c 'rm f'",
    "su -c 'rm f'",
    "su -lc 'rm f'",
    "doas rm f",
    "firejail rm f",
    "firejail --quiet rm f",
    "proot -r / rm f",
    "taskset 1 rm f",
    "ionice -c 3 rm f",
    "chrt 1 rm f",
    "watch rm f",
    "parallel rm ::: f",
    "uv run rm f",
    "npx rm f",
    "npm exec -- rm f",
    "ssh localhost rm f",
    "ssh localhost 'rm -rf f'",
    "git -c alias.x='!rm f' x",
    "git -c alias.x='!/bin/rm f' x",
    "make RM=rm clean",
]


@pytest.mark.parametrize("line", WRAPPED)
def test_unknown_wrappers_do_not_pass_a_deny_rule(
    security_figures: SecurityFigures, root: Path, line: str
) -> None:
    rules = PermissionRules.from_config(DENY_RM)
    with security_figures.attempt("bash deny bypass by wrapper"):
        assert rules.decide_bash(line, root=root).action == "deny"


def test_a_multi_word_deny_rule_needs_its_words_in_a_row(root: Path) -> None:
    rules = PermissionRules.from_config({"bash": {"*": "allow", "git push": "deny"}})
    assert rules.decide_bash("ssh host git push", root=root).action == "deny"
    assert rules.decide_bash("flock l git push origin", root=root).action == "deny"
    assert rules.decide_bash("echo git status", root=root).action == "allow"


PLAIN = [
    ("ls -la", ALLOW),
    ("echo hi", ALLOW),
    ("printf '%s\\n' x", ALLOW),
    ("printf -v out '%s' x; echo $out", ALLOW),
    ("test -v HOME", ALLOW),
    ("[[ -v x ]] && echo set", ALLOW),
    ("echo $((1 + 2 * 3)) $((0x1f)) $((2#101))", ALLOW),
    ("echo ${#x} ${x:-def} ${!a[@]} ${!pre*} ${a[0]} ${a[@]}", ALLOW),
    ("[[ 1 -eq 1 ]] && ls", ALLOW),
    ("x=1; ls", ALLOW),
    ("git status", ALLOW_GIT),
    ("LANG=C ls", ALLOW_GIT),
    ("LC_ALL=C TZ=UTC git log", ALLOW_GIT),
    ("NO_COLOR=1 FORCE_COLOR=0 CI=1 npm test", ALLOW_GIT),
    ("env LANG=C git status", ALLOW_GIT),
    ("export LANG=C; git status", {"bash": {"git": "allow", "export": "allow"}}),
    ("npm test", ALLOW_GIT),
    ("dir=src; ls $dir", ALLOW_GIT),
]


@pytest.mark.parametrize(("line", "config"), PLAIN)
def test_plain_lines_still_run(root: Path, line: str, config: dict[str, object]) -> None:
    rules = PermissionRules.from_config(config)  # type: ignore[arg-type]
    decision = rules.decide_bash(line, root=root)
    assert decision.action == "allow", decision.reasons


@pytest.mark.parametrize(
    "line", ["ls -la", "git status", "echo hi", "npm test", "LANG=C ls", "cat README.md"]
)
def test_plain_lines_still_run_with_a_deny_rule(root: Path, line: str) -> None:
    assert PermissionRules.from_config(DENY_RM).decide_bash(line, root=root).action == "allow"
