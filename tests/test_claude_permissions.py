"""Claude Code's permission rules as agentls rules (agentls/claude_permissions.py): each form its
documentation gives, translated to rules no wider than it, or skipped with the reason; merged
after the rules already there without overriding a stricter one."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.claude_permissions import Entry, Skipped, Translated, merge, translate
from agentls.permission.rules import PermissionRules, Rule


def rules(kind: str, text: str) -> list[tuple[str, str | None, str, bool]]:
    result = translate(Entry(Path("settings.json"), "user", kind, text))  # type: ignore[arg-type]
    assert isinstance(result, Translated), result
    return [(r.tool, r.pattern, r.action, r.exact) for r in result.rules]


def skipped(kind: str, text: str) -> str:
    result = translate(Entry(Path("settings.json"), "user", kind, text))  # type: ignore[arg-type]
    assert isinstance(result, Skipped), result
    return result.reason


def test_bash_rules_keep_their_word_boundaries() -> None:
    assert rules("allow", "Bash") == [("bash", None, "allow", False)]
    assert rules("allow", "Bash(*)") == [("bash", None, "allow", False)]
    assert rules("allow", "Bash(npm run test:*)") == [("bash", "npm run test *", "allow", False)]
    assert rules("allow", "Bash(ls*)") == [("bash", "ls*", "allow", False)]
    # Claude Code's rule without `*` is that command exactly: an allow stays exact, a deny
    # takes the longer lines too.
    assert rules("allow", "Bash(npm run build)") == [("bash", "npm run build", "allow", True)]
    assert rules("deny", "Bash(npm publish)") == [("bash", "npm publish", "deny", False)]


def test_a_bash_star_before_the_end_is_skipped_for_allow_and_widened_for_deny() -> None:
    assert "prefixes" in skipped("allow", "Bash(git * main)")
    assert "shell characters" in skipped("allow", "Bash(echo $HOME)")
    assert rules("deny", "Bash(git * main)") == [("bash", "git", "deny", False)]
    assert rules("ask", "Bash(rm -r * | xargs)") == [("bash", "rm -r", "ask", False)]
    assert "no plain command words" in skipped("deny", "Bash(* --force)")


def test_file_paths_follow_claude_codes_four_forms() -> None:
    assert rules("allow", "Edit(/src/**/*.ts)") == [
        ("edit", "src/**/*.ts", "allow", False),
        ("write", "src/**/*.ts", "allow", False),
    ]
    assert rules("allow", "Read(//etc/hosts)") == [("read", "/etc/hosts", "allow", False)]
    assert rules("allow", "Read(~/Documents/*.pdf)") == [
        ("read", "~/Documents/*.pdf", "allow", False)
    ]
    assert rules("allow", "Write(src/generated/**)") == [
        ("write", "src/generated/**", "allow", False)
    ]
    # A name without "/": from the current folder for allow, at any depth for deny and ask.
    assert rules("allow", "Read(*.log)") == [("read", "*.log", "allow", False)]
    assert [r[1] for r in rules("deny", "Read(*.key)")] == ["**/*.key"] * 4
    assert [r[0] for r in rules("deny", "Read(secrets/**)")] == ["read", "glob", "grep", "list"]
    assert [r[0] for r in rules("deny", "Write(infra/**)")] == ["edit", "write"]
    assert "gitignore syntax" in skipped("deny", "Read(config/[ab].yml)")
    assert "gitignore syntax" in skipped("allow", "Edit(!keep.txt)")
    assert "`..`" in skipped("allow", "Read(../other/**)")
    assert "whole file system" in skipped("allow", "Read(//)")
    assert "empty specifier" in skipped("allow", "Read()")


def test_other_tools() -> None:
    assert rules("allow", "WebFetch(domain:example.com)") == [
        ("webfetch", "example.com", "allow", False)
    ]
    assert rules("deny", "WebFetch(domain:example.com)") == [
        ("webfetch", "example.com", "deny", False),
        ("webfetch", "*.example.com", "deny", False),
    ]
    assert "domain:HOST" in skipped("allow", "WebFetch(https://example.com/*)")
    assert rules("deny", "mcp__github") == [("mcp__github", None, "deny", False)]
    assert rules("allow", "mcp__github__*") == [("mcp__github__*", None, "allow", False)]
    assert rules("allow", "mcp__db__query") == [("mcp__db__query", None, "allow", False)]
    assert "MCP tool name" in skipped("allow", "mcp__db__query(select)")
    assert rules("allow", "Grep") == [("grep", None, "allow", False)]
    assert rules("deny", "Task") == [("task", None, "deny", False)]
    assert "sub-agent types" in skipped("deny", "Agent(Explore)")
    assert "web search" in skipped("deny", "WebSearch")
    assert "no tool" in skipped("allow", "Frobnicate")
    assert "not a rule" in skipped("allow", "Bash(npm test")


@pytest.mark.parametrize(
    ("before", "call", "expected"),
    [
        # The user's deny on the same tool is written again after the imported allow.
        ([Rule(tool="bash", pattern="npm publish", action="deny")], "npm publish", "deny"),
        # A blanket ask (like the defaults) is what the imported allow refines.
        ([Rule(tool="bash", action="ask")], "npm test", "allow"),
    ],
)
def test_merge_never_overrides_a_stricter_rule_already_there(
    before: list[Rule], call: str, expected: str, tmp_path: Path
) -> None:
    target = merge(before, [Rule(tool="bash", pattern="npm *", action="allow")])
    assert target.added == [Rule(tool="bash", pattern="npm *", action="allow")]
    rules_ = PermissionRules.from_config([r.model_dump() for r in target.after])
    assert rules_.evaluate("bash", call, root=tmp_path) == expected


def test_merge_orders_imports_as_claude_code_decides_and_skips_what_is_there() -> None:
    allow = Rule(tool="read", pattern="docs/**", action="allow")
    deny = Rule(tool="read", pattern="docs/private/**", action="deny")
    ask = Rule(tool="read", pattern="docs/drafts/**", action="ask")
    target = merge([allow], [deny, ask, allow])
    assert target.added == [ask, deny] and target.already == [allow]
    assert target.after == [allow, ask, deny]
    assert merge([allow, ask, deny], [deny, ask, allow]).added == []
