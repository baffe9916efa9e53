"""Rule order exactly as documented: in the long form the last matching rule wins whatever the
patterns; in the short form a tool's own entry beats "*", and a pattern's entry beats its tool's
"*". Secret globs only ever make a file stricter. Each case in both orders."""

from __future__ import annotations

from typing import Any

import pytest

from agentls.permission.rules import PermissionRules
from tests.security.conftest import SecurityFigures

# (configuration, tool, subject, expected)
CASES: list[tuple[Any, str, str, str]] = [
    # long form: the last match wins, patterned or not
    (
        [
            {"tool": "edit", "pattern": "src/**", "action": "allow"},
            {"tool": "edit", "action": "deny"},
        ],
        "edit",
        "src/a.py",
        "deny",
    ),
    (
        [
            {"tool": "edit", "action": "deny"},
            {"tool": "edit", "pattern": "src/**", "action": "allow"},
        ],
        "edit",
        "src/a.py",
        "allow",
    ),
    (
        [
            {"tool": "edit", "action": "deny"},
            {"tool": "edit", "pattern": "src/**", "action": "allow"},
        ],
        "edit",
        "lib/a.py",
        "deny",
    ),
    (
        [
            {"tool": "write", "pattern": "**", "action": "deny"},
            {"tool": "write", "action": "allow"},
        ],
        "write",
        "a.py",
        "allow",
    ),
    (
        [
            {"tool": "write", "action": "allow"},
            {"tool": "write", "pattern": "**", "action": "deny"},
        ],
        "write",
        "a.py",
        "deny",
    ),
    (
        [{"tool": "*", "action": "allow"}, {"tool": "edit", "pattern": "*.lock", "action": "deny"}],
        "edit",
        "uv.lock",
        "deny",
    ),
    (
        [{"tool": "edit", "pattern": "*.lock", "action": "deny"}, {"tool": "*", "action": "allow"}],
        "edit",
        "uv.lock",
        "allow",
    ),
    (
        [{"tool": "bash", "pattern": "rm", "action": "deny"}, {"tool": "bash", "action": "allow"}],
        "bash",
        "rm x",
        "allow",
    ),
    (
        [{"tool": "bash", "action": "allow"}, {"tool": "bash", "pattern": "rm", "action": "deny"}],
        "bash",
        "rm x",
        "deny",
    ),
    (
        [
            {"tool": "bash", "pattern": "git", "action": "allow"},
            {"tool": "bash", "pattern": "git push", "action": "deny"},
        ],
        "bash",
        "git push",
        "deny",
    ),
    (
        [
            {"tool": "bash", "pattern": "git push", "action": "deny"},
            {"tool": "bash", "pattern": "git", "action": "allow"},
        ],
        "bash",
        "git push",
        "allow",
    ),
    # short form: the tool's own entry beats "*", whatever the order of the keys
    ({"edit": "allow", "*": "deny"}, "edit", "a.py", "allow"),
    ({"*": "deny", "edit": "allow"}, "edit", "a.py", "allow"),
    ({"edit": "deny", "*": "allow"}, "edit", "a.py", "deny"),
    ({"*": "allow", "edit": "deny"}, "edit", "a.py", "deny"),
    ({"*": "allow", "edit": "deny"}, "write", "a.py", "allow"),
    ({"bash": {"*": "allow", "rm": "deny"}}, "bash", "rm -f x", "deny"),
    ({"bash": {"rm": "deny", "*": "allow"}}, "bash", "rm -f x", "deny"),
    ({"bash": {"*": "deny", "ls": "allow"}}, "bash", "ls -la", "allow"),
    ({"bash": {"ls": "allow", "*": "deny"}}, "bash", "ls -la", "allow"),
    ({"bash": {"ls": "allow", "*": "deny"}}, "bash", "cat x", "deny"),
    ({"*": "deny", "bash": {"ls": "allow"}}, "bash", "cat x", "deny"),
    ({"bash": {"ls": "allow"}, "*": "deny"}, "bash", "ls", "allow"),
    # secrets: stricter only, unless a rule naming them decides last
    ({"read": "allow"}, "read", "app/.env", "ask"),
    ({"*": "allow"}, "read", "Server.PEM", "ask"),
    ([{"tool": "read", "pattern": "**/.env", "action": "allow"}], "read", "app/.env", "allow"),
    (
        [
            {"tool": "read", "pattern": "**/.env", "action": "allow"},
            {"tool": "read", "action": "allow"},
        ],
        "read",
        "app/.env",
        "ask",
    ),
    (
        [
            {"tool": "read", "action": "allow"},
            {"tool": "read", "pattern": "**/.env", "action": "allow"},
        ],
        "read",
        "app/.env",
        "allow",
    ),
    ([{"tool": "read", "pattern": "**/.env", "action": "deny"}], "read", "app/.env", "deny"),
    ([{"tool": "read", "action": "deny"}], "read", "app/.env", "deny"),
]


@pytest.mark.parametrize(("config", "tool", "subject", "expected"), CASES)
def test_rule_order(
    security_figures: SecurityFigures, config: Any, tool: str, subject: str, expected: str
) -> None:
    with security_figures.attempt("rule order"):
        rules = PermissionRules.from_config(config)
        assert rules.evaluate(tool, subject) == expected


def test_secret_outside_the_workspace_stays_refused(security_figures: SecurityFigures) -> None:
    for config in (None, {"*": "allow"}, {"read": "allow"}):
        with security_figures.attempt("rule order"):
            rules = PermissionRules.from_config(config)
            assert rules.evaluate("read", "/home/u/.ssh/id_rsa", outside_workspace=True) == "deny"
