"""Hostile bash command lines against the rules: each line with the decision it must get.

Under {"bash": {"ls": "allow", "git status": "allow"}} (plus the defaults: write asks) nothing but
ls and git status may run without a question; under {"bash": {"*": "allow", "rm": "deny"}} no
spelling of rm may run. Lines the analysis cannot be sure of ask, or deny where a deny rule exists.
The workspace root is a temporary folder; `~` is a home outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.permission.rules import PermissionRules
from tests.security.conftest import SecurityFigures

ALLOW_LS = {"bash": {"ls": "allow", "git status": "allow"}}
DENY_RM = {"bash": {"*": "allow", "rm": "deny"}}

# Lines that must keep running without a question under ALLOW_LS.
PLAIN = [
    "ls",
    "ls -la",
    "ls 2>&1",
    "ls > /dev/null",
    "ls 2>/dev/null",
    "ls &> /dev/null",
    "ls >&2",
    "ls > /dev/stderr",
    "git status || ls",
    "git status && ls -l",
    "ls | ls",
    "(ls)",
    "{ ls; }",
    "ls; git status --short",
    "ls\ngit status",
    "git status --porcelain 2>&1 | ls",
    "ls 'a b' \"c\"",
    "/bin/ls",
    "/usr/bin/ls -a",
    "if ls; then git status; fi",
    "ls # a comment",
    "ls -- -x",
]

# (line, decision) under ALLOW_LS: each ran something never allowed before.
BYPASS_ALLOW: list[tuple[str, str]] = [
    ("ls >(touch x)", "ask"),
    ("ls <(touch x)", "ask"),
    ("ls $'\\'' ; touch x ; echo $'\\''", "ask"),
    ("ls # '\ntouch x", "ask"),
    ('ls # "\ntouch x', "ask"),
    ("ls > any/file", "ask"),
    ("ls >> out.txt", "ask"),
    ("ls &> out.txt", "ask"),
    ("ls &>> out.txt", "ask"),
    ("ls 2> err.txt", "ask"),
    ("ls >| out.txt", "ask"),
    ("ls <> out.txt", "ask"),
    ("ls >& out.txt", "ask"),
    ("ls | tee out.txt", "ask"),
    ("ls | tee -a a.txt b.txt", "ask"),
    ("git status --porcelain > ~/.bashrc", "deny"),
    ("ls > /etc/cron.d/x", "deny"),
    ("ls > ../outside.txt", "deny"),
    ("ls > $HOME/.bashrc", "ask"),
    ("ls > $(echo f)", "ask"),
    ("ls > >(touch x)", "ask"),
    ("ls; touch x", "ask"),
    ("ls;touch x", "ask"),
    ("ls && touch x", "ask"),
    ("ls || touch x", "ask"),
    ("ls | sh", "ask"),
    ("ls & touch x", "ask"),
    ("ls\ntouch x", "ask"),
    ("ls $(touch x)", "ask"),
    ("ls `touch x`", "ask"),
    ('ls "$(touch x)"', "ask"),
    ('ls "`touch x`"', "ask"),
    ("ls ${x:-$(touch x)}", "ask"),
    ('ls <<< "$(touch x)"', "ask"),
    ("cat <<EOF\n$(touch x)\nEOF", "ask"),
    ("ls <<EOF\n$(touch x)\nEOF", "ask"),
    ("ls <<EOF\n`touch x`\nEOF", "ask"),
    ("ls <<'EOF'\n$(touch x)\nEOF\ntouch y", "ask"),
    ("git status; git push", "ask"),
    ("git -c core.pager=touch status", "ask"),
    ("git --config-env=core.pager=X status", "ask"),
    ("git --exec-path=. status", "ask"),
    ("git statusx", "ask"),
    ("'git status'", "ask"),
    ("./ls", "ask"),
    ("bin/ls", "ask"),
    ("PATH=. ls", "ask"),
    ("LD_PRELOAD=/tmp/x.so ls", "ask"),
    ("BASH_ENV=x ls", "ask"),
    ("export PATH=.:$PATH; ls", "ask"),
    ("IFS=x ls", "ask"),
    ("env PATH=. ls", "ask"),
    ("ls() { touch x; }; ls", "ask"),
    ("alias ls='touch x'; ls", "ask"),
    ("bash -c 'ls; touch x'", "ask"),
    ("eval 'ls; touch x'", "ask"),
    ("[[ $(touch x) ]]", "ask"),
    ("(( $(touch x) ))", "ask"),
    ("trap 'touch x' EXIT; ls", "ask"),
    ("ls {,;touch,x}", "ask"),
    ("ls\0; touch x", "ask"),
    ("ls \\\n; touch x", "ask"),
    ("sudo ls", "ask"),
    ("nohup touch x", "ask"),
    ("cd .. && ls > x", "ask"),
    ("$'\\x6c\\x73' > f", "ask"),
    ("time -o f ls", "ask"),
]

# (line, decision) under DENY_RM: spellings of rm, each must be denied.
BYPASS_DENY: list[tuple[str, str]] = [
    ("rm f", "deny"),
    ("/bin/rm f", "deny"),
    ("./rm f", "deny"),
    ("\\rm f", "deny"),
    ("command rm f", "deny"),
    ("command -p rm f", "deny"),
    ("builtin rm f", "deny"),
    ("r''m f", "deny"),
    ('"rm" f', "deny"),
    ("r\\m f", "deny"),
    ("$'rm' f", "deny"),
    ("$'\\x72\\x6d' f", "deny"),
    ("$'\\162\\155' f", "deny"),
    ("env rm f", "deny"),
    ("env -i rm f", "deny"),
    ("env -u HOME FOO=1 rm f", "deny"),
    ("env -C /tmp rm f", "deny"),
    ("env -S 'rm f'", "deny"),
    ("x=rm; $x f", "deny"),
    ("${x} f", "deny"),
    ("$(echo rm) f", "deny"),
    ("`echo rm` f", "deny"),
    ("rm\tf", "deny"),
    ("rm\\\n f", "deny"),
    ("echo f | xargs rm", "deny"),
    ("echo f | xargs -0 -I{} rm {}", "deny"),
    ("echo f | xargs -n 1 -P 4 rm", "deny"),
    ("bash -c 'rm f'", "deny"),
    ("sh -c 'rm f'", "deny"),
    ("zsh -c 'rm f'", "deny"),
    ("dash -c 'rm f'", "deny"),
    ("bash -lc 'rm f'", "deny"),
    ("bash -c \"bash -c 'rm f'\"", "deny"),
    ('sh -c "$(echo rm)"', "deny"),
    ("eval rm f", "deny"),
    ("eval 'r''m f'", "deny"),
    ("exec rm f", "deny"),
    ("nohup rm f", "deny"),
    ("time rm f", "deny"),
    ("time -p rm f", "deny"),
    ("nice -n 5 rm f", "deny"),
    ("nice -5 rm f", "deny"),
    ("timeout 5 rm f", "deny"),
    ("timeout -s KILL 5 rm f", "deny"),
    ("stdbuf -oL rm f", "deny"),
    ("setsid rm f", "deny"),
    ("sudo rm f", "deny"),
    ("sudo -u x rm f", "deny"),
    ("sudo -E VAR=1 rm f", "deny"),
    ("busybox rm f", "deny"),
    ("find . -exec rm {} \\;", "deny"),
    ("find . -execdir rm {} +", "deny"),
    ("find . -ok rm {} \\;", "deny"),
    ("f(){ rm f; }; f", "deny"),
    ("function f { rm f; }", "deny"),
    ("alias x='rm f'", "deny"),
    ("ls;rm f", "deny"),
    ("ls\nrm f", "deny"),
    ("ls && rm f", "deny"),
    ("ls || rm f", "deny"),
    ("ls | rm f", "deny"),
    ("ls & rm f", "deny"),
    ("{ rm f; }", "deny"),
    ("(rm f)", "deny"),
    ("if true; then rm f; fi", "deny"),
    ("if rm f; then :; fi", "deny"),
    ("for f in x; do rm $f; done", "deny"),
    ("while true; do rm f; done", "deny"),
    ("until false; do rm f; done", "deny"),
    ("case a in a) rm f;; esac", "deny"),
    ("ls &", "allow"),
    ("rm f &", "deny"),
    ("coproc rm f", "deny"),
    ("! rm f", "deny"),
    ("ls <(rm f)", "deny"),
    ("ls > >(rm f)", "deny"),
    ("echo $(rm f)", "deny"),
    ('echo "$(rm f)"', "deny"),
    ('echo "`rm f`"', "deny"),
    ("cat <<EOF\n$(rm f)\nEOF", "deny"),
    ("cat <<EOF\n`rm f`\nEOF", "deny"),
    ("x=$(rm f)", "deny"),
    ("rm\\ -rf", "deny"),
    ("r? f", "deny"),
    ("r* f", "deny"),
    ("{r,}m f", "deny"),
    ("rｍ f", "deny"),  # a fullwidth m: an unknown name
    ("ｒm f", "deny"),
    ("rm\0 f", "deny"),
    ("trap 'rm f' EXIT", "deny"),
    ("bash <<< 'rm f'", "deny"),
    ("echo 'rm f' | bash", "deny"),
    ("su -c 'rm f'", "deny"),
    ("LD_PRELOAD=x ls", "deny"),
    ("'rm' -rf /", "deny"),
    ("ls; /usr/bin/rm -rf /", "deny"),
    ("ls > /etc/x", "deny"),
]

# (config, line, decision) under the defaults and other configurations.
OTHERS: list[tuple[object, str, str]] = [
    (None, "ls", "ask"),
    (None, "ls > out.txt", "ask"),
    (None, "ls > ~/.bashrc", "deny"),
    (None, "x=rm; $x", "ask"),
    (None, "{r,}m", "ask"),
    ({"bash": "allow"}, "ls > out.txt", "ask"),
    ({"bash": "allow"}, "$x", "ask"),
    ({"bash": "allow", "write": "allow"}, "ls > out.txt", "allow"),
    ({"bash": "allow", "write": "allow"}, "ls > ~/.bashrc", "deny"),
    ({"bash": "allow", "write": {"*": "allow", "*.lock": "deny"}}, "ls > uv.lock", "deny"),
    (
        [
            {"tool": "bash", "action": "allow"},
            {"tool": "write", "pattern": "/tmp/agentls-open", "action": "allow"},
        ],
        "ls > /tmp/agentls-open/x",
        "allow",
    ),
    ({"bash": "sandboxed"}, "touch x", "ask"),
]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.mark.parametrize("line", PLAIN)
def test_plain_allowed_lines_run_without_a_question(root: Path, line: str) -> None:
    rules = PermissionRules.from_config(ALLOW_LS)
    decision = rules.decide_bash(line, root=root)
    assert decision.action == "allow", decision.reasons


def _kind(line: str, expected: str) -> str:
    if expected != "allow" and (">" in line or "tee" in line) and "(" not in line:
        return "redirection write"
    return "bash rule bypass"


@pytest.mark.parametrize(("line", "expected"), BYPASS_ALLOW)
def test_allow_rules_do_not_leak(
    security_figures: SecurityFigures, root: Path, line: str, expected: str
) -> None:
    rules = PermissionRules.from_config(ALLOW_LS)
    with security_figures.attempt(_kind(line, expected)):
        decision = rules.decide_bash(line, root=root)
        assert decision.action == expected, decision.reasons
        assert rules.evaluate("bash", line, root=root) == expected
        if expected != "allow":
            assert decision.reasons


@pytest.mark.parametrize(("line", "expected"), BYPASS_DENY)
def test_deny_rules_hold(
    security_figures: SecurityFigures, root: Path, line: str, expected: str
) -> None:
    rules = PermissionRules.from_config(DENY_RM)
    with security_figures.attempt("bash deny bypass"):
        decision = rules.decide_bash(line, root=root)
        assert decision.action == expected, decision.reasons


@pytest.mark.parametrize(("config", "line", "expected"), OTHERS)
def test_other_configurations(
    security_figures: SecurityFigures, root: Path, config: object, line: str, expected: str
) -> None:
    rules = PermissionRules.from_config(config)
    with security_figures.attempt(_kind(line, expected)):
        assert rules.decide_bash(line, root=root).action == expected


def test_sandboxed_rule_runs_inside_the_sandbox_only(root: Path) -> None:
    rules = PermissionRules.from_config({"bash": "sandboxed"})
    decision = rules.decide_bash("touch x > out.txt", root=root, sandboxed=True)
    assert decision.action == "allow" and decision.sandboxed
    assert rules.decide_bash("touch x > ~/.bashrc", root=root, sandboxed=True).action == "deny"
    assert rules.decide_bash("$x", root=root, sandboxed=True).action == "ask"
    assert rules.decide_bash("touch x", root=root).action == "ask"


def test_a_symlink_out_of_the_workspace_is_outside(root: Path) -> None:
    (root / "link").symlink_to(Path.home() / ".bashrc")
    rules = PermissionRules.from_config({"bash": "allow", "write": "allow"})
    assert rules.decide_bash("ls > link", root=root).action == "deny"
    assert rules.decide_bash("ls | tee link", root=root).action == "deny"


def test_the_corpus_is_large_enough() -> None:
    assert len(BYPASS_ALLOW) + len(BYPASS_DENY) + len(OTHERS) + len(PLAIN) >= 100


def test_test_brackets_are_a_plain_command(root: Path) -> None:
    rules = PermissionRules.from_config({"bash": {"ls": "allow", "[": "allow"}})
    assert rules.decide_bash("[ -f x ] && ls", root=root).action == "allow"
    assert rules.decide_bash("[a] x", root=root).action == "ask"
