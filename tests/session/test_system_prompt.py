"""The system prompt of each front end and agent kind, generated in one place (issue 27 items 2,
3, 6): it names only the tools offered, says what checks an edit, and keeps the safety lines
short."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from agentls.session.system_prompt import (
    LANGUAGE_TOOLS,
    SAFETY,
    PromptKind,
    Surroundings,
    build_system,
)
from agentls.tools.registry import default_registry

ALL = frozenset(default_registry().names())
WITHOUT_LANGUAGES = ALL - set(LANGUAGE_TOOLS)
READ_ONLY = frozenset({"read", "glob", "grep", "list", "webfetch"})


def prompt_text(kind: PromptKind, s: Surroundings, mode: str = "build") -> str:
    [block] = build_system(Path("/ws"), mode, prompt=kind, surroundings=s, today=date(2026, 1, 2))
    return str(block["text"])


def named_tools(text: str) -> set[str]:
    """The tools the prompt names in backticks."""
    return {name for name in re.findall(r"`([a-z_]+)`", text) if name in ALL}


def test_each_front_end_has_its_own_main_prompt() -> None:
    s = Surroundings(tools=WITHOUT_LANGUAGES)
    terminal = prompt_text(PromptKind("terminal"), s)
    editor = prompt_text(PromptKind("editor"), Surroundings(ALL, "the editor's language servers"))
    acp = prompt_text(PromptKind("acp"), s)
    assert "from a terminal (`agentls run`)" in terminal and "editor" not in terminal
    assert "Your edits apply to the editor's buffers" in editor
    assert "Agent Client Protocol" in acp
    assert len({terminal, editor, acp}) == 3


def test_the_prompt_names_only_the_tools_offered() -> None:
    for kind in ("main", "subagent", "command"):
        for tools in (ALL, WITHOUT_LANGUAGES, READ_ONLY, frozenset({"read"})):
            languages = "the editor's language servers" if tools == ALL else None
            text = prompt_text(PromptKind("editor", kind), Surroundings(tools, languages))
            assert named_tools(text) <= tools, (kind, sorted(tools))


def test_without_a_language_server_the_environment_says_so() -> None:
    text = prompt_text(PromptKind(), Surroundings(WITHOUT_LANGUAGES))
    assert "Language servers: none here, so no language tools" in text
    assert "`symbols`" not in text
    with_one = prompt_text(PromptKind(), Surroundings(ALL, "pyright (.py), from languageServers"))
    assert "Language servers: pyright (.py), from languageServers" in with_one
    assert "use `symbols`, `definition`" in with_one


def test_a_sub_agent_is_told_its_last_message_is_a_report_for_its_caller() -> None:
    text = prompt_text(
        PromptKind("terminal", "subagent", "explore", "Finds code."), Surroundings(READ_ONLY)
    )
    assert text.startswith("You are a sub-agent of agentls, of the agent type explore (Finds code)")
    assert "the report the caller relays" in text and "file path and line" in text
    assert "Your tools are read-only" in text
    for absent in ("todowrite", "`edit`", "say what you changed", "Safety and scope"):
        assert absent not in text
    # An agent type given tools that change things is told so, with the safety lines.
    writer = prompt_text(
        PromptKind("terminal", "subagent", "fixer"), Surroundings(READ_ONLY | {"edit", "bash"})
    )
    assert "You may change things with `edit` and `bash`" in writer and SAFETY in writer


def test_a_commands_agent_type_gets_the_main_prompt_for_its_tools() -> None:
    text = prompt_text(
        PromptKind("editor", "command", description="Reviews code."), Surroundings(READ_ONLY)
    )
    assert "This turn runs a custom command as an agent type: Reviews code." in text
    assert "todowrite" not in text and "Safety and scope" not in text
    assert "Be concise: answer with what you found" in text


def test_verification_says_what_this_front_end_checks() -> None:
    terminal = prompt_text(PromptKind("terminal"), Surroundings(WITHOUT_LANGUAGES))
    assert "a syntax check of Python and JSON files only" in terminal
    assert "Run the project's tests, type checker or linter with `bash`" in terminal
    commands = prompt_text(PromptKind("acp"), Surroundings(WITHOUT_LANGUAGES, verify_commands=True))
    assert "The configured verify commands' output follows it" in commands
    editor = prompt_text(PromptKind("editor"), Surroundings(ALL, "the editor's language servers"))
    assert "the diagnostics of the editor's language servers" in editor
    assert "Diagnostics are not tests." in editor


def test_the_safety_lines_are_about_150_words_and_cover_the_risky_actions() -> None:
    words = len(SAFETY.split())
    assert 120 <= words <= 170, words
    for point in ("only when the user asks", "force-push", "explicit request", "sandbox", "ask"):
        assert point in SAFETY
    assert SAFETY in prompt_text(PromptKind(), Surroundings(WITHOUT_LANGUAGES))


def test_plan_mode_names_only_the_tools_it_has() -> None:
    text = prompt_text(PromptKind(), Surroundings(WITHOUT_LANGUAGES | {"exit_plan"}), mode="plan")
    assert "You are in plan mode" in text and "`exit_plan`" in text
    assert "the language tools" not in text


def test_no_sentence_ends_twice() -> None:
    for kind in ("main", "subagent", "command"):
        text = prompt_text(PromptKind("terminal", kind, "t", "Desc."), Surroundings(ALL, "x"))
        assert ".." not in text.replace("...", "")
