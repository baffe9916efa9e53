"""Where hooks are read from and what a file may say: Claude Code's settings format, each error
naming the file and the field, matchers as whole-name regular expressions, a command from two
files run once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentls.config import Settings
from agentls.hooks.config import Hook, load_hooks, parse_hooks

FILE = Path("/home/u/.claude/settings.json")


def group(command: str, matcher: str | None = None, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **more}]}
    if matcher is not None:
        out["matcher"] = matcher
    return out


def test_each_command_is_a_hook_with_its_event_matcher_timeout_and_file() -> None:
    hooks = parse_hooks(
        FILE,
        {
            "PreToolUse": [group("./no-rm.sh", "Bash", timeout=5), group("./log.sh")],
            "Stop": [group("make test")],
        },
    )
    assert hooks == [
        Hook("PreToolUse", "Bash", "./no-rm.sh", 5.0, FILE),
        Hook("PreToolUse", "", "./log.sh", 60.0, FILE),
        Hook("Stop", "", "make test", 60.0, FILE),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "hooks: expected an object of events"),
        ({"Stop": {}}, "hooks.Stop: expected a list of matchers"),
        ({"Stop": [{"matcher": "x"}]}, "hooks.Stop.0.hooks: Field required"),
        ({"Stop": [{"hooks": [{"type": "command"}]}]}, "hooks.Stop.0.hooks.0.command: missing"),
        ({"PreToolUse": [group("x", "Bash(")]}, "hooks.PreToolUse.0.matcher: not a regular"),
        (
            {"PreToolUse": [group("x", timeout=0)]},
            "hooks.PreToolUse.0.hooks.0.timeout: Input should be greater than 0",
        ),
    ],
)
def test_a_hook_that_is_not_valid_is_refused_naming_the_file_and_field(
    value: Any, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        parse_hooks(FILE, value)
    assert str(caught.value).startswith(f"{FILE}: {message}"), str(caught.value)


@pytest.mark.parametrize(
    ("matcher", "tool", "runs"),
    [
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # the whole name, as Claude Code matches
        ("Edit|Write", "Write", True),
        ("Edit|Write", "Read", False),
        ("", "Read", True),
        ("*", "mcp__github__create_issue", True),
        ("mcp__github__.*", "mcp__github__create_issue", True),
        ("mcp__github__.*", "mcp__gitlab__create_issue", False),
    ],
)
def test_a_matcher_is_a_regular_expression_on_the_whole_tool_name(
    matcher: str, tool: str, runs: bool
) -> None:
    assert Hook("PreToolUse", matcher, "x", 60, FILE).matches(tool) is runs


def test_stop_and_prompt_hooks_ignore_a_matcher() -> None:
    assert Hook("Stop", "Bash", "x", 60, FILE).matches(None)
    assert Hook("UserPromptSubmit", "nothing", "x", 60, FILE).matches(None)


def test_the_user_s_files_add_up_and_a_command_in_both_runs_once(
    tmp_path: Path, _isolated_config_home: Path
) -> None:
    claude = tmp_path / "claude-home" / "settings.json"  # CLAUDE_CONFIG_DIR (tests/conftest.py)
    claude.parent.mkdir()
    claude.write_text(json.dumps({"hooks": {"Stop": [group("make test"), group("./notify.sh")]}}))
    mine = _isolated_config_home / "config.json"
    mine.parent.mkdir(parents=True)
    mine.write_text(json.dumps({"hooks": {"Stop": [group("make test")]}, "maxSteps": 5}))
    loaded = load_hooks(Settings(), None)
    assert loaded.notices == []
    assert [(h.command, h.source) for h in loaded.hooks] == [
        ("make test", claude),
        ("./notify.sh", claude),
        ("make test", mine),
    ]
    assert [h.command for h in loaded.for_event("Stop")] == ["make test", "./notify.sh"]


def test_a_file_that_is_not_valid_is_left_out_with_a_notice(tmp_path: Path) -> None:
    claude = tmp_path / "claude-home" / "settings.json"
    claude.parent.mkdir()
    claude.write_text('{"hooks": {"Stop": [')
    loaded = load_hooks(Settings(), None)
    assert loaded.hooks == []
    [notice] = loaded.notices
    assert notice.startswith(f"agentls: hooks not loaded: {claude}: not valid JSON")


def test_hooks_agentls_does_not_run_are_left_out_and_the_file_s_others_kept() -> None:
    skipped: list[str] = []
    value = {
        "PermissionRequest": [group("./approve.sh")],  # an event of newer Claude Code
        "Stop": [
            {"hooks": [{"type": "prompt", "prompt": "Done?"}, {"type": "command", "command": "x"}]}
        ],
    }
    hooks = parse_hooks(FILE, value, skipped)
    assert [(h.event, h.command) for h in hooks] == [("Stop", "x")]
    assert skipped == [
        f"{FILE}: hooks.PermissionRequest: not an event agentls runs hooks at (it runs "
        "PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart, "
        "SessionEnd, PreCompact, Notification)",
        f"{FILE}: hooks.Stop.0.hooks.0.type: agentls runs only \"command\" hooks, not 'prompt'",
    ]
