"""A custom command's front matter `agent: NAME`: its turn runs as that agent type of the `agents`
setting (its tools, its model, its instructions), in the same session and for that turn only,
through the loop against the local Messages API."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentls.session import CommandError
from agentls.session.commands import parse_command
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory

AGENTS = {
    "agents": {
        "reviewer": {
            "description": "reviews code",
            "prompt": "You are a strict reviewer.",
            "tools": ["read", "grep", "write", "task", "nosuchtool"],
            "model": "claude-haiku-4-5",
        },
        "plain": {"description": "no model of its own"},
    },
    "permissions": {"*": "allow"},
    # Claude 4.5 models think with a budget by default, and the API then wants every tool-use
    # turn to start with a thinking block; these scripted replies have none.
    "thinking": "disabled",
}


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools", [])}


def user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


def write_command(directory: Path, name: str, body: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.md").write_text(body)


@pytest.fixture
def user_commands(_isolated_config_home: Path) -> Path:
    return _isolated_config_home / "commands"


def test_the_front_matter_names_the_agent() -> None:
    command = parse_command("r", "user", "---\nagent: 'reviewer'\n---\nReview $ARGUMENTS")
    assert (command.agent, command.template) == ("reviewer", "Review $ARGUMENTS")
    assert parse_command("r", "user", "Review it").agent is None


async def test_the_turn_runs_as_the_agent_type_and_the_next_as_the_session(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(user_commands, "review", "---\nagent: reviewer\n---\nReview $ARGUMENTS")
    h = await make_harness(AGENTS)
    (h.root / "a.py").write_text("x = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.py"})),
        reply(text("looks fine")),
        reply(text("plain answer")),
    )
    session = await h.agent.new_session()
    assert h.agent.list_commands()["review"].agent == "reviewer"
    result = await h.agent.prompt(session.id, "/review a.py")
    assert result.text == "looks fine"
    first, second = h.accepted_requests()
    # Only the type's tools the session has (no task, as for a sub-agent; no unknown name).
    assert tool_names(first) == tool_names(second) == {"read", "grep", "write"}
    assert first["model"] == second["model"] == "claude-haiku-4-5"
    assert user_text(first) == "You are a strict reviewer.\n\nReview a.py"
    # The same session: its history goes on, and the next prompt is the session's own again.
    await h.agent.prompt(session.id, "and now?")
    after = h.accepted_requests()[2]
    assert after["model"] == session.model != "claude-haiku-4-5"
    assert {"task", "bash", "edit"} <= tool_names(after)
    assert user_text(after) == "and now?"
    # The command's turn (its tool call, its result, its answer) is in the session's history.
    assert len(after["messages"]) == 5
    assert (
        after["messages"][0]["content"][-1]["text"] == "You are a strict reviewer.\n\nReview a.py"
    )
    # No child session: the command ran in this one.
    assert [s.id for s in await h.store.list_sessions()] == [session.id]


async def test_the_commands_own_model_wins_and_a_type_without_one_keeps_the_sessions(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(
        user_commands, "quick", "---\nagent: reviewer\nmodel: claude-opus-4-5\n---\nQuick look"
    )
    write_command(user_commands, "calm", "---\nagent: plain\n---\nCalm look")
    h = await make_harness(AGENTS)
    api.enqueue(reply(text("a")), reply(text("b")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "/quick")
    await h.agent.prompt(session.id, "/calm")
    quick, calm = h.accepted_requests()
    assert quick["model"] == "claude-opus-4-5"
    assert calm["model"] == session.model
    # A type that names no tools has the read-only ones; no prompt: the text alone.
    assert "write" not in tool_names(calm) and "read" in tool_names(calm)
    assert user_text(calm) == "Calm look"


async def test_an_unknown_agent_is_refused_and_nothing_is_sent(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(user_commands, "odd", "---\nagent: ghost\n---\nDo it")
    h = await make_harness(AGENTS)
    session = await h.agent.new_session()
    with pytest.raises(CommandError, match="'ghost'") as info:
        await h.agent.prompt(session.id, "/odd")
    assert "general, plain, reviewer" in str(info.value)
    assert api.all_requests == []
    assert await h.agent.messages(session.id) == []


async def test_plan_mode_still_refuses_the_agent_types_writes(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(user_commands, "fix", "---\nagent: reviewer\n---\nFix $ARGUMENTS")
    h = await make_harness(AGENTS)
    api.enqueue(
        reply(tool_use("write", {"path": "new.txt", "content": "x"})),
        reply(text("could not")),
    )
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    await h.agent.prompt(session.id, "/fix it")
    assert not (h.root / "new.txt").exists()
    [refused] = [
        b for b in h.accepted_requests()[1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    assert refused["is_error"] and "plan mode" in refused["content"]


async def test_acp_offers_the_command_saying_its_agent(
    make_harness: HarnessFactory, user_commands: Path
) -> None:
    from agentls.acp.server import available_commands

    write_command(user_commands, "review", "---\nagent: reviewer\n---\nReview $ARGUMENTS")
    h = await make_harness(AGENTS)
    offered = {c.name: c.description for c in available_commands(h.agent).available_commands}
    assert offered["review"] == "Review $ARGUMENTS (as reviewer)"
    assert offered["clear"] == "Start a new session"


async def test_a_steered_command_with_an_agent_waits_for_a_turn_of_its_own(
    make_harness: HarnessFactory, api: MessagesAPIServer, user_commands: Path
) -> None:
    write_command(user_commands, "review", "---\nagent: reviewer\n---\nReview $ARGUMENTS")
    h = await make_harness({**AGENTS, "permissions": {}})
    api.enqueue(
        reply(tool_use("bash", {"command": "echo one"})),
        reply(text("ran it")),
        reply(text("reviewed")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "run it"))
    question = await h.wait_for("permission-request")
    steer = asyncio.create_task(h.agent.prompt(session.id, "/review a.py", mode="steer"))
    await asyncio.sleep(0.05)
    h.agent.approve(session.id, question.request_id, "once")
    assert (await asyncio.wait_for(turn, 10)).text == "ran it"
    assert (await asyncio.wait_for(steer, 10)).text == "reviewed"
    assert not h.of_type("steer") and len(h.of_type("turn-start")) == 2
    first, second, review = h.accepted_requests()
    assert "Review" not in str(second["messages"])  # not joined to the running turn
    assert tool_names(review) == {"read", "grep", "write"}
    assert user_text(review) == "You are a strict reviewer.\n\nReview a.py"
