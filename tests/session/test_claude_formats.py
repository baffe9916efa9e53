"""Claude Code's names in agentls's terms: tool lists (commas, specifiers, MCP tools, opencode's
names), a tool agentls lacks refused naming it, and model aliases."""

from __future__ import annotations

import pytest

from agentls.session.claude_formats import FormatError, entries, resolve_model, tools_of

KNOWN = ["read", "write", "edit", "grep", "glob", "list", "bash", "webfetch", "task", "todowrite"]


def test_tool_lists_in_claude_codes_names_become_agentls_tools() -> None:
    assert entries("Bash(git add:*), Bash(git commit -m, --amend:*), Read") == [
        "Bash(git add:*)",
        "Bash(git commit -m, --amend:*)",
        "Read",
    ]
    assert tools_of("Read, Grep, Glob, Bash, LS, MultiEdit, Edit", KNOWN) == [
        "read", "grep", "glob", "bash", "list", "edit",
    ]  # fmt: skip
    assert tools_of(["WebFetch", "TodoWrite", "mcp__github__get_issue", "read"], KNOWN) == [
        "webfetch",
        "todowrite",
        "mcp__github__get_issue",
        "read",
    ]
    assert tools_of(None, KNOWN) == [] and tools_of("", KNOWN) == []


def test_a_tool_agentls_lacks_is_refused_by_name() -> None:
    with pytest.raises(FormatError, match="names the tool WebSearch, which agentls lacks"):
        tools_of("Read, WebSearch", KNOWN)
    with pytest.raises(FormatError, match="not an MCP tool name"):
        tools_of("mcp__github", KNOWN)


@pytest.mark.parametrize(
    ("alias", "session", "model"),
    [
        (None, "claude-opus-5-5", "claude-opus-5-5"),  # inherit
        ("sonnet", "claude-opus-5-5", "claude-sonnet-5-5"),  # the newest of the family
        ("opus", "claude-opus-5", "claude-opus-5"),  # the session's is of the family
        ("haiku", "bedrock/claude-opus-5", "bedrock/claude-haiku-5-5"),  # on the same cloud
        ("sonnet", "local/qwen3-coder", "claude-sonnet-5-5"),
        ("claude-haiku-4-5", "claude-opus-5-5", "claude-haiku-4-5"),  # an id as it is
    ],
)
def test_model_aliases(alias: str | None, session: str, model: str) -> None:
    assert resolve_model(alias, session) == model
