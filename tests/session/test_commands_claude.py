"""Commands in Claude Code's format, where users keep them: ~/.claude/commands and a trusted
workspace's .claude/commands (a file in a subfolder by its name and as /folder:name), `$1`...,
`argument-hint`, a model alias, and a file naming a tool agentls lacks refused when run; through
the loop against the local Messages API."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentls.config import load_settings
from agentls.session import CommandError
from agentls.session.commands import fill, parse_invocation
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory
from tests.session.claude_support import claude_setup

BASE = {"model": "claude-opus-5-5", "apiRetryBaseDelayS": 0.01, "sandbox": "off"}


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


@pytest.fixture
async def h(
    make_harness: HarnessFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Harness:
    harness = await make_harness(BASE)
    claude_setup(tmp_path, monkeypatch, harness.root)
    return harness


def trust(h: Harness, trusted: bool) -> None:
    h.agent.update_settings(load_settings(h.root, BASE, workspace_trusted=trusted))


def test_positional_arguments_and_namespaced_invocations() -> None:
    template = "Review PR #$1 with priority $2.$3"
    assert (
        fill(template, '456 "very high"', positional=True)
        == "Review PR #456 with priority very high."
    )
    assert fill("Fix #$ARGUMENTS", "12 now", positional=True) == "Fix #12 now"
    # An agentls template keeps `$1` as written (a shell snippet's awk '{print $1}').
    assert fill("awk '{print $1}'", "x") == "awk '{print $1}'\n\nx"
    assert parse_invocation("/frontend:component Button") == ("frontend:component", "Button")
    assert parse_invocation("/usr/bin/env x") is None


async def test_the_users_and_a_trusted_workspaces_claude_commands_are_listed(h: Harness) -> None:
    trust(h, False)
    untrusted = h.agent.list_commands()
    assert untrusted["fix-issue"].source == "user"
    assert untrusted["fix-issue"].description == "Fix a GitHub issue (arguments: [issue-number])"
    assert "component" not in untrusted and "frontend:component" not in untrusted
    trust(h, True)
    commands = h.agent.list_commands()
    assert commands["component"].source == "workspace"
    assert commands["frontend:component"].template == commands["component"].template
    assert commands["frontend:component"].description.startswith("Create a React component")


async def test_a_namespaced_command_fills_its_arguments_and_runs_on_its_model(
    h: Harness, api: MessagesAPIServer
) -> None:
    trust(h, True)
    session = await h.agent.new_session()
    api.enqueue(reply(text("made")), reply(text("fixed")))
    await h.agent.prompt(session.id, "/frontend:component Button '{label: string}'")
    await h.agent.prompt(session.id, "/fix-issue 123")
    component, fix = h.accepted_requests()
    assert user_text(component).startswith(
        "Create a React component named Button in src/components/Button.tsx taking the props: "
        "{label: string}."
    )
    assert component["model"] == "claude-haiku-5-5"  # `model: haiku`
    assert user_text(fix) == "Fix issue #123 following our coding standards."
    assert fix["model"] == "claude-opus-5-5"


async def test_a_command_naming_a_tool_agentls_lacks_is_refused_and_nothing_is_sent(
    h: Harness, api: MessagesAPIServer
) -> None:
    trust(h, True)
    listed = h.agent.list_commands()["commit"]
    assert "WebSearch, which agentls lacks" in listed.description
    session = await h.agent.new_session()
    with pytest.raises(CommandError, match="/commit cannot run: it names the tool WebSearch"):
        await h.agent.prompt(session.id, "/commit")
    assert api.all_requests == []


async def test_agentls_own_command_wins_over_a_claude_code_one_of_its_name(
    h: Harness, _isolated_config_home: Path
) -> None:
    own = _isolated_config_home / "commands"
    own.mkdir(parents=True)
    (own / "fix-issue.md").write_text("Fix it the agentls way: $ARGUMENTS")
    assert h.agent.list_commands()["fix-issue"].template == "Fix it the agentls way: $ARGUMENTS"


async def test_the_plain_name_is_the_folders_own_file_else_the_first_subfolders(
    h: Harness,
) -> None:
    commands = h.root / ".claude" / "commands"
    (commands / "backend").mkdir()
    (commands / "backend" / "component.md").write_text("A backend component $1")
    (commands / "review.md").write_text("Review the workspace")
    (commands / "backend" / "review.md").write_text("Review the backend")
    trust(h, True)
    listed = h.agent.list_commands()
    assert listed["component"].template == "A backend component $1"  # backend < frontend
    assert listed["frontend:component"].template.startswith("Create a React component")
    assert listed["review"].template == "Review the workspace"
    assert listed["backend:review"].template == "Review the backend"


async def test_allowed_tools_run_without_asking_for_that_commands_turn_only(
    h: Harness, api: MessagesAPIServer
) -> None:
    (h.root / ".claude" / "commands" / "mark.md").write_text(
        "---\nallowed-tools: Bash(touch:*)\ndescription: Mark the tree\n---\nTouch $1.\n"
    )
    trust(h, True)
    session = await h.agent.new_session()
    touch = {"command": "touch marked.txt"}
    api.enqueue(reply(tool_use("bash", touch)), reply(text("marked")))
    await h.agent.prompt(session.id, "/mark marked.txt")
    assert (h.root / "marked.txt").exists()
    assert h.of_type("permission-request") == []
    # The next turn is no longer the command's: the same call asks.
    api.enqueue(reply(tool_use("bash", {"command": "touch again.txt"})), reply(text("ok")))
    turn = asyncio.create_task(h.agent.prompt(session.id, "touch again.txt"))
    asked = await h.wait_for("permission-request")
    assert asked.tool == "bash"
    h.agent.approve(session.id, asked.request_id, "reject")
    await asyncio.wait_for(turn, 10)
    assert not (h.root / "again.txt").exists()


async def test_every_trusted_workspace_folders_commands_count_the_first_folder_winning(
    h: Harness, tmp_path: Path, api: MessagesAPIServer
) -> None:
    other, untrusted = tmp_path / "other", tmp_path / "untrusted"
    for folder, name, body in [
        (other, "deploy", "Deploy the other folder: $ARGUMENTS"),
        (other, "component", "The other folder's component"),
        (untrusted, "wipe", "---\nallowed-tools: Bash\n---\nGone: !`touch wiped`"),
    ]:
        (folder / ".claude" / "commands").mkdir(parents=True, exist_ok=True)
        (folder / ".claude" / "commands" / f"{name}.md").write_text(body)
    trust(h, True)
    h.agent.policy.update_folders(
        {
            other: load_settings(other, BASE, workspace_trusted=True),
            untrusted: load_settings(untrusted, BASE, workspace_trusted=False),
        }
    )
    listed = h.agent.list_commands()
    assert listed["deploy"].source == "workspace"
    assert listed["component"].template.startswith("Create a React component")  # the root's
    assert "wipe" not in listed
    session = await h.agent.new_session()
    api.enqueue(reply(text("deployed")))
    await h.agent.prompt(session.id, "/deploy staging")
    assert user_text(h.accepted_requests()[0]) == "Deploy the other folder: staging"
    with pytest.raises(CommandError, match="unknown command /wipe"):
        await h.agent.prompt(session.id, "/wipe")
    assert not (h.root / "wiped").exists() and not (untrusted / "wiped").exists()
