"""Options that make an allowed program run another program or write a file ask even under a
prefix allow rule (`git log`, `rg`, ...); "always" for a runner (`uv run`, `docker exec`, ...) or
for such a line is the exact line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.permission.grants import grant_for
from agentls.permission.rules import PermissionRules
from tests.security.conftest import SecurityFigures

ALLOWED = {
    "bash": {
        "ls": "allow",
        "git status": "allow",
        "git log": "allow",
        "git diff": "allow",
        "git grep": "allow",
        "git show": "allow",
        "git fetch": "allow",
        "git": "allow",
        "rg": "allow",
        "find": "allow",
        "sort": "allow",
        "sed": "allow",
        "awk": "allow",
        "tar": "allow",
        "zip": "allow",
        "curl": "allow",
        "wget": "allow",
        "man": "allow",
        "less": "allow",
        "go test": "allow",
        "npm": "allow",
        "cat": "allow",
        "echo": "allow",
        "uniq": "allow",
    }
}

HOSTILE = [
    "git log -1 --format='tformat:touch /tmp/x' --output=/tmp/gt_out.sh",
    "git log -1 --output=/root/.bashrc",
    "git log --output /root/.bashrc",
    "git log --outp=/root/.bashrc",
    "git diff --output=/tmp/x",
    "git diff --ext-diff",
    "git show --textconv HEAD",
    "git grep -O'touch /tmp/pwned' -e b",
    "git grep -nO'touch /tmp/pwned' b",
    "git grep --open-files-in-pager=vi b",
    "git -c core.pager='touch /tmp/x' log",
    "git -ccore.pager=x log",
    "git --config-env=core.pager=X log",
    "git --exec-path=/tmp log",
    "git --git-dir=evil.git log",
    "git fetch --upload-pack='touch /tmp/x' origin",
    "git fetch -u 'touch /tmp/x' origin",
    "git clone -c core.hooksPath=h x",
    "git clone --template=t x",
    "git push --receive-pack=x origin",
    "git rebase --exec 'touch x' HEAD~1",
    "git rebase -x 'touch x' HEAD~1",
    "git bisect run ./evil.sh",
    "git submodule foreach 'touch x'",
    "git format-patch -o /tmp/out HEAD~1",
    "git archive -o /tmp/a.tar HEAD",
    "rg --pre bash x payload.sh",
    "rg --pre=bash x",
    "rg --pre-glob '*' x",
    "rg --hostname-bin=./x x",
    "rg x $a",
    "rg x *",
    "rg x {--pre=bash,y}",
    'rg x "$(cat f)"',
    "find . -delete",
    "find . -fprint out",
    "sort -o /tmp/x f",
    "sort -uo /tmp/x f",
    "sort --output=/tmp/x f",
    "sort --compress-program=./x f",
    "sed -i 's/a/b/' f",
    "sed -ni 's/a/b/p' f",
    "sed --in-place 's/a/b/' f",
    "sed 's/a/b/w /tmp/x' f",
    "sed 's/a/touch x/e' f",
    "sed '1e touch x' f",
    "sed -n 'w /tmp/x' f",
    "sed -e p -e 'W /tmp/x' f",
    "sed -f script.sed f",
    "awk 'BEGIN{system(\"touch x\")}'",
    "awk '{print > \"/tmp/x\"}' f",
    "awk '{print | \"sh\"}' f",
    "awk -f prog.awk f",
    "tar --to-command='sh -c x' -xf a.tar",
    "tar -I ./x -cf a.tar f",
    "tar --use-compress-program=./x -cf a.tar f",
    "tar --checkpoint=1 --checkpoint-action=exec=sh -cf a.tar f",
    "tar xIf ./x a.tar",
    "zip a.zip f -TT 'sh -c x'",
    "zip --unzip-command='sh' -T a.zip f",
    "curl -o /tmp/x https://e",
    "curl -sSLo /tmp/x https://e",
    "curl -O https://e/x",
    "curl --output /tmp/x https://e",
    "wget -O /tmp/x https://e",
    "wget -e 'output_document=/tmp/x' https://e",
    "man -P 'sh -c x' ls",
    "less -o /tmp/x f",
    "go test -exec ./x ./...",
    "go test -toolexec=./x ./...",
    "npm test --script-shell=./x",
    "ls; git log --output=/tmp/x",
]


@pytest.mark.parametrize("line", HOSTILE)
def test_risky_options_ask_under_allow(
    security_figures: SecurityFigures, tmp_path: Path, line: str
) -> None:
    rules = PermissionRules.from_config(ALLOWED)
    with security_figures.attempt("option that runs or writes"):
        assert rules.evaluate("bash", line, root=tmp_path) == "ask"


@pytest.mark.parametrize("line", ["git log --output=/tmp/x", "rg --pre bash x", "sed -i s/a/b/ f"])
def test_deny_stays_deny(security_figures: SecurityFigures, tmp_path: Path, line: str) -> None:
    rules = PermissionRules.from_config(
        {
            "bash": {
                "git log": "allow",
                "rg": "allow",
                "sed": "allow",
                "git": "deny",
                "rg --pre": "deny",
                "sed -i": "deny",
            }
        }
    )
    with security_figures.attempt("option that runs or writes"):
        assert rules.evaluate("bash", line, root=tmp_path) == "deny"


PLAIN = [
    "ls -la",
    "git status",
    "git log --oneline -5",
    "git log -1 --format='%h %s'",
    "git log -p -u",
    "git log --output-indicator-new=+ -p",
    "git diff --stat",
    "git diff -- '*.py'",
    "git grep -n foo -- '*.py'",
    "git show HEAD:README.md",
    "git fetch origin",
    "git -C sub status",
    "git --no-pager log",
    "rg foo",
    "rg -n 'foo.*bar' src",
    "rg -g '*.py' TODO",
    "rg --type py -e 'x|y'",
    "find . -name '*.py'",
    "find . -type f -newer x",
    "sort -u f",
    "sort -k2 -t, f",
    "sed -n '1,20p' f",
    "sed 's/foo/bar/g' f",
    "sed -E 's/(a|b)/c/' f",
    "sed -e 's/a/b/' -e '/x/d' f",
    "awk '{print $1}' f",
    "awk -F'|' '{print $2}' f",
    "awk -v x=1 '{print x}' f",
    "tar -tzf a.tar.gz",
    "tar -xzf a.tar.gz",
    "curl -s https://e",
    "curl -XPOST -H 'Accept: x' https://e",
    "wget -q --spider https://e",
    "man ls",
    "less -R f",
    "go test ./...",
    "npm test",
    "LANG=C ls",
    "cat f | sort | uniq -c",
]


@pytest.mark.parametrize("line", PLAIN)
def test_plain_lines_still_allowed(tmp_path: Path, line: str) -> None:
    rules = PermissionRules.from_config(ALLOWED)
    assert rules.evaluate("bash", line, root=tmp_path) == "allow", rules.decide_bash(
        line, root=tmp_path
    ).reasons


def test_reason_names_the_option(tmp_path: Path) -> None:
    rules = PermissionRules.from_config(ALLOWED)
    decision = rules.decide_bash("rg --pre bash x payload.sh", root=tmp_path)
    assert decision.action == "ask"
    assert any("--pre" in r for r in decision.reasons), decision.reasons


RUNNERS = [
    ("uv run pytest", "uv run bash -c 'touch x'"),
    ("npm exec foo", "npm exec bar"),
    ("npx foo", "npx bar"),
    ("poetry run pytest", "poetry run bash"),
    ("go run .", "go run ./evil"),
    ("cargo run", "cargo run --bin evil"),
    ("docker run img", "docker run -v /:/h img"),
    ("docker exec c ls", "docker exec c rm -rf /"),
    ("kubectl exec p -- ls", "kubectl exec p -- rm x"),
    ("pnpm dlx x", "pnpm dlx y"),
    ("yarn dlx x", "yarn dlx y"),
    ("yarn node x.js", "yarn node -e 1"),
    ("pipx run x", "pipx run y"),
    ("bundle exec x", "bundle exec rake evil"),
    ("npm run build", "npm run evil"),
    ("git bisect start", "git bisect run ./evil.sh"),
    ("git log --output=out.txt", "git log --output=/root/.bashrc"),
    ("rg --pre cat x", "rg --pre bash x"),
]


@pytest.mark.parametrize(("line", "other"), RUNNERS)
def test_runner_grant_is_the_exact_line(
    security_figures: SecurityFigures, tmp_path: Path, line: str, other: str
) -> None:
    base = PermissionRules.from_config(None)
    with security_figures.attempt("wide always grant"):
        grant = grant_for("bash", line, root=tmp_path)
        assert grant is not None
        assert grant.label == f"Always allow exactly `{line}`"
        rules = base.extended(grant.rules)
        assert rules.evaluate("bash", line, root=tmp_path) == "allow"
        assert rules.evaluate("bash", other, root=tmp_path) == "ask"


@pytest.mark.parametrize(
    ("line", "label", "later"),
    [
        ("make test", "Always allow `make test` commands", "make test -j2"),
        ("git log -5", "Always allow `git log` commands", "git log --oneline"),
        ("npm test", "Always allow `npm test` commands", "npm test -- -x"),
    ],
)
def test_plain_grants_keep_their_prefix(tmp_path: Path, line: str, label: str, later: str) -> None:
    grant = grant_for("bash", line, root=tmp_path)
    assert grant is not None and grant.label == label
    rules = PermissionRules.from_config(None).extended(grant.rules)
    assert rules.evaluate("bash", later, root=tmp_path) == "allow"
    assert rules.evaluate("bash", "git log --output=/tmp/x", root=tmp_path) == "ask"
