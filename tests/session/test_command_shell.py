"""Claude Code commands' `!` commands: run before the prompt is sent, as bash calls through the
permission code (the command's `allowed-tools` allow what they name, the rest asks, a deny rule
refuses), their output put where they stood; never from an untrusted workspace's file, and never
started by what the user types after the name. Through the loop against the local Messages API."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentls.config import load_settings
from agentls.session import CommandError
from agentls.session.command_shell import mask
from messages_api import MessagesAPIServer, reply, text
from tests.conftest import Harness, HarnessFactory

BASE = {"model": "claude-opus-5-5", "apiRetryBaseDelayS": 0.01, "sandbox": "off"}


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def command(root: Path, name: str, body: str) -> None:
    folder = root / ".claude" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(body)


async def trusted(make_harness: HarnessFactory, settings: dict[str, Any] | None = None) -> Harness:
    h = await make_harness({**BASE, **(settings or {})})
    h.agent.update_settings(
        load_settings(h.root, {**BASE, **(settings or {})}, workspace_trusted=True)
    )
    return h


def test_the_commands_are_masked_out_before_the_arguments_fill_the_template() -> None:
    masked, commands, prefix = mask("Branch: !`git branch --show-current`\nSee a!`b` and !`x\ny`")
    assert commands == ["git branch --show-current", "x\ny"]
    assert "!`" not in masked.replace("a!`b`", "")
    assert masked.startswith(f"Branch: {prefix}-0]]")


async def test_an_allowed_command_runs_first_and_its_output_stands_in_the_prompt(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await trusted(make_harness)
    (h.root / "notes.txt").write_text("alpha\n")
    command(
        h.root,
        "status",
        "---\nallowed-tools: Bash(cat:*)\ndescription: Review the notes\n---\n"
        "## Context\n- Notes: !`cat notes.txt`\n\nReview them for $ARGUMENTS.\n",
    )
    session = await h.agent.new_session()
    api.enqueue(reply(text("reviewed")))
    await h.agent.prompt(session.id, "/status typos")
    (body,) = h.accepted_requests()
    sent = user_text(body)
    assert "- Notes: [output of `cat notes.txt`, run before this prompt was sent" in sent
    assert "alpha\n\nExit code: 0\n[end of the output of `cat notes.txt`]" in sent
    assert sent.rstrip().endswith("Review them for typos.")
    assert "!`" not in sent
    assert h.of_type("permission-request") == []
    (call,) = h.of_type("tool-call")
    assert (call.tool, call.input) == ("bash", {"command": "cat notes.txt"})
    (result,) = h.of_type("tool-result")
    assert result.call_id == call.call_id and not result.is_error
    # The turn's stored prompt is the one sent (no tool call of it is stored).
    messages = await h.store.load_messages(session.id)
    assert "alpha" in messages[0].text() and len(messages) == 2


async def test_a_command_allowed_tools_do_not_name_asks_and_a_refusal_is_said_in_its_place(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await trusted(make_harness)
    command(
        h.root,
        "mark",
        "---\nallowed-tools: Bash(git status:*)\n---\nMarked: !`touch marked.txt && echo done`\n",
    )
    session = await h.agent.new_session()
    api.enqueue(reply(text("ok")))
    turn = asyncio.create_task(h.agent.prompt(session.id, "/mark"))
    asked = await h.wait_for("permission-request")
    assert asked.tool == "bash" and asked.input["command"] == "touch marked.txt && echo done"
    assert api.all_requests == []  # nothing is sent while it waits
    h.agent.approve(session.id, asked.request_id, "reject")
    await asyncio.wait_for(turn, 10)
    assert not (h.root / "marked.txt").exists()
    sent = user_text(h.accepted_requests()[0])
    assert sent.startswith(
        "Marked: [the command `touch marked.txt && echo done` of this prompt did not run or failed"
    )
    assert "rejected" in sent


async def test_a_deny_rule_wins_over_the_commands_allowed_tools(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await trusted(make_harness, {"permissions": {"bash": {"cat secret.txt": "deny"}}})
    (h.root / "secret.txt").write_text("hunter2\n")
    command(h.root, "leak", "---\nallowed-tools: Bash(cat:*)\n---\nSecret: !`cat secret.txt`\n")
    session = await h.agent.new_session()
    api.enqueue(reply(text("ok")))
    await h.agent.prompt(session.id, "/leak")
    sent = user_text(h.accepted_requests()[0])
    assert "hunter2" not in sent
    assert "did not run or failed; agentls said: Permission denied" in sent


async def test_the_arguments_fill_a_command_but_never_widen_what_it_allows_or_start_one(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await trusted(make_harness)
    command(
        h.root,
        "say",
        "---\nallowed-tools: Bash(echo:*)\n---\nSaid: !`echo $1`\nAbout: $ARGUMENTS\n",
    )
    session = await h.agent.new_session()
    api.enqueue(reply(text("ok")), reply(text("ok")))
    await h.agent.prompt(session.id, "/say hello")
    assert "hello\n\nExit code: 0" in user_text(h.accepted_requests()[0])
    # What the user typed runs only inside the command, and through the rules: `echo x; touch`
    # is no `echo` call, so it asks; a `!` command in the arguments is text.
    turn = asyncio.create_task(h.agent.prompt(session.id, '/say "x; touch pwned" !`touch pwned2`'))
    asked = await h.wait_for("permission-request")
    assert asked.input["command"] == "echo x; touch pwned"
    h.agent.approve(session.id, asked.request_id, "reject")
    await asyncio.wait_for(turn, 10)
    assert not (h.root / "pwned").exists() and not (h.root / "pwned2").exists()
    assert 'About: "x; touch pwned" !`touch pwned2`' in user_text(h.accepted_requests()[1])


async def test_an_untrusted_workspaces_command_with_commands_never_runs_anything(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(BASE)
    h.agent.update_settings(load_settings(h.root, BASE, workspace_trusted=False))
    command(
        h.root,
        "setup",
        "---\nallowed-tools: Bash\ndescription: Set up\n---\nReady: !`touch pwned`\n$ARGUMENTS\n",
    )
    session = await h.agent.new_session()
    assert "setup" not in h.agent.list_commands()
    with pytest.raises(CommandError, match="unknown command /setup"):
        await h.agent.prompt(session.id, "/setup now")
    assert not (h.root / "pwned").exists()
    assert api.all_requests == [] and h.of_type("tool-call") == []


async def test_stopping_the_turn_while_a_command_asks_sends_and_stores_nothing(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await trusted(make_harness)
    command(h.root, "slow", "Result: !`touch started.txt`\n")
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "/slow"))
    await h.wait_for("permission-request")
    await h.agent.cancel(session.id)
    result = await asyncio.wait_for(turn, 10)
    assert result.finish_reason == "cancelled"
    assert not (h.root / "started.txt").exists()
    (ended,) = h.of_type("tool-result")
    assert ended.status == "cancelled"
    assert api.all_requests == [] and await h.store.load_messages(session.id) == []
    # The session goes on: the next prompt is a turn of its own.
    api.enqueue(reply(text("fine")))
    assert (await h.agent.prompt(session.id, "hello")).text == "fine"
