"""Path globs match in linear time: a workspace's `secretPatterns` (kept even when it is not
trusted) or a rule pattern cannot stall the server with a long file name (catastrophic
backtracking), and the linear forms match exactly what the plain translation of a glob matches."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentls.permission.globs import glob_body, glob_regex, path_matches
from agentls.permission.rules import PermissionRules, secret_globs
from tests.security.conftest import SecurityFigures


def reference_body(pattern: str) -> str:
    """The plain (backtracking) translation the rules always used: the meaning of a glob."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
        i += 1
    body = "".join(out)
    if not any(ch in pattern for ch in "*?"):
        body += "(?:/.*)?"
    return body


def reference(pattern: str, subject: str, ignore_case: bool = False) -> bool:
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    return re.match(reference_body(pattern) + r"\Z", subject, flags) is not None


PIECES = ["a", "b", "/", "*", "**", "?", ".", "A"]
patterns = st.lists(st.sampled_from(PIECES), min_size=1, max_size=9).map("".join)
subjects = st.text(alphabet="ab/.A", max_size=12)


@settings(max_examples=3000, deadline=None)
@given(patterns, subjects, st.booleans())
def test_exact_matcher_is_the_plain_translation(
    pattern: str, subject: str, ignore_case: bool
) -> None:
    matched = glob_regex(pattern, ignore_case).match(subject) is not None
    assert matched == reference(pattern, subject, ignore_case)


@settings(max_examples=2000, deadline=None)
@given(patterns, subjects)
def test_body_matches_at_least_the_glob(pattern: str, subject: str) -> None:
    # PathFilter's union regex is built from the bodies: a superset test, exact or wider.
    if reference(pattern, subject):
        assert re.match(f"(?:{glob_body(pattern)})\\Z", subject, re.DOTALL)


@settings(max_examples=500, deadline=None)
@given(st.lists(patterns, min_size=1, max_size=4), st.lists(subjects, max_size=6))
def test_path_filter_agrees_with_evaluate(extra: list[str], names: list[str]) -> None:
    rules = PermissionRules.from_config({"read": "allow"}, secret_patterns=secret_globs(extra))
    shown, hidden = rules.path_filter("read").split(names)
    expected = [n for n in names if rules.evaluate("read", n) == "allow"]
    assert shown == expected
    assert hidden == len(names) - len(expected)


# The reviewer's patterns, and others that make a backtracking translation exponential or of high
# degree: each star of one kind and the other, "**/" between chunks, "?" among stars.
HOSTILE = [  # (pattern, a long name it matches)
    ("*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 5_000 + "b"),
    ("**a**a**a**a**a**a**a**a**a**a*b", "a/" * 2_500 + "ab"),
    ("**/*a*a*a*a*a*a*a*a*a*a*b", "x/" * 2_000 + "a" * 5_000 + "b"),
    ("**a*a**a*a**a*a**a*a**a*a*b", "a/" * 2_000 + "a" * 5_000 + "b"),
    ("**/a**/a**/a**/a**/a**/a**/b", "x/" * 2_000 + "a/" * 6 + "b"),
    ("a**/a**/a**/a**/a**/a**/a*b", "a" * 7 + "x" * 5_000 + "b"),
    ("*?*?*?*?*?*?*?*?*?*?*?*?*b", "a" * 5_000 + "b"),
    ("**?**?**?**?**?**?**?**?*b", "a/" * 2_500 + "ab"),
    ("*a/*a*a*a*a*a*a*a*a*a*b", "a/" + "a" * 5_000 + "b"),
]
NAMES = ["a" * 10_000, "src/" + "a" * 10_000, "a/" * 5_000, ("a" * 99 + "/") * 100]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("pattern", "matched"), HOSTILE)
def test_hostile_secret_pattern_does_not_stall(
    pattern: str, matched: str, security_figures: SecurityFigures
) -> None:
    with security_figures.attempt("glob ReDoS"):
        rules = PermissionRules.from_config(
            {"read": "allow"}, secret_patterns=secret_globs([pattern])
        )
        for name in NAMES:
            assert rules.evaluate("read", name) == "allow"
            assert path_matches(pattern, name) is False
        shown, hidden = rules.path_filter("read").split(["x.py", *NAMES])
        assert (shown, hidden) == (["x.py", *NAMES], 0)
        # Still a guard: a name it does match asks.
        assert path_matches(pattern, matched) is True
        assert rules.evaluate("read", matched) == "ask"
        assert rules.path_filter("read").split(["x.py", matched]) == (["x.py"], 1)


@pytest.mark.timeout(10)
def test_reviewer_figures(security_figures: SecurityFigures) -> None:
    with security_figures.attempt("glob ReDoS"):
        rules = PermissionRules.from_config(
            None, secret_patterns=secret_globs(["*a*a*a*a*a*a*a*a*a*a*a*a*b"])
        )
        assert rules.evaluate("read", "a" * 28) == "allow"
        assert rules.evaluate("read", "src/" + "a" * 32) == "allow"
        assert rules.path_filter("read").split(["x.py", "a" * 30]) == (["x.py", "a" * 30], 0)


# Plain globs keep their answers.
@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        ("**/.env*", "app/.env.local", True),
        ("**/.env*", "app/x.env", False),
        ("**/*.pem", "certs/deep/ca.pem", True),
        ("**/service-account*.json", "k/service-account-prod.json", True),
        ("**/service-account*.json", "k/service-account/x.json", False),
        ("src/**", "src/a/b.py", True),
        ("src/*.py", "src/a/b.py", False),
        ("src", "src/a/b.py", True),
        ("a**/b", "ab", True),
        ("a**/b", "a/x/b", True),
        ("a**/b", "axb", False),
        ("***/x", "a/b/x", True),
        ("***/x", "x", False),
        ("****/x", "x", True),
    ],
)
def test_plain_globs(pattern: str, subject: str, expected: bool) -> None:
    assert path_matches(pattern, subject) is expected
    assert reference(pattern, subject) is expected
