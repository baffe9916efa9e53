"""Questions the model asks (ask_user) and how refusals read, through the loop on the local
Messages API: the question goes through the one ask path, the answer comes back as the result."""

from __future__ import annotations

import asyncio
from typing import Any

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory


def result_of(h: Harness, request: int) -> dict[str, Any]:
    body = h.accepted_requests()[request]
    return next(b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result")


async def ask(h: Harness, api: MessagesAPIServer, call: dict[str, Any]) -> tuple[str, Any, Any]:
    api.enqueue(reply(tool_use("ask_user", call)), reply(text("ok")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    request = await h.wait_for("permission-request")
    return session.id, request, turn


async def test_ask_user_shows_the_question_and_choices_and_returns_the_answer(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    call = {"question": "Which name?", "choices": ["alpha", "beta"]}
    session_id, request, turn = await ask(h, api, call)
    assert request.tool == "ask_user" and request.title == "Which name?"
    assert request.input == {"question": "Which name?", "choices": ["alpha", "beta"]}
    h.agent.approve(session_id, request.request_id, "once", "beta")
    await asyncio.wait_for(turn, 10)
    result = result_of(h, 1)
    assert not result.get("is_error") and result["content"] == "The user answered: beta"


async def test_a_declined_question_says_not_to_ask_again(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    session_id, request, turn = await ask(h, api, {"question": "Tabs or spaces?"})
    h.agent.approve(session_id, request.request_id, "reject", "not now")
    await asyncio.wait_for(turn, 10)
    result = result_of(h, 1)
    assert result["is_error"]
    assert "chose not to answer" in result["content"] and "not now" in result["content"]
    assert "Do not ask the same again" in result["content"]


async def test_a_question_with_no_one_to_ask_tells_the_model_to_stop(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    session_id, request, turn = await ask(h, api, {"question": "Deploy?"})
    h.agent.approve(session_id, request.request_id, "unattended")
    await asyncio.wait_for(turn, 10)
    result = result_of(h, 1)
    assert result["is_error"] and "the user is not at a terminal" in result["content"]
    assert h.of_type("permission-resolved")[0].decision == "unattended"


async def test_ask_user_runs_in_plan_mode(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("ask_user", {"question": "Scope?"})), reply(text("ok")))
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    turn = asyncio.create_task(h.agent.prompt(session.id, "plan it"))
    request = await h.wait_for("permission-request")
    h.agent.approve(session.id, request.request_id, "once", "only the parser")
    await asyncio.wait_for(turn, 10)
    assert result_of(h, 1)["content"] == "The user answered: only the parser"


async def test_a_rejected_call_says_not_to_retry_it_and_carries_the_feedback(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("bash", {"command": "touch x"})), reply(text("ok")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    request = await h.wait_for("permission-request")
    h.agent.approve(session.id, request.request_id, "reject", "use make instead")
    await asyncio.wait_for(turn, 10)
    content = result_of(h, 1)["content"]
    assert "Their feedback: use make instead" in content
    assert "Do not retry the same call" in content


async def test_a_call_with_no_one_to_ask_is_not_presented_as_feedback(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("bash", {"command": "touch x"})), reply(text("ok")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    request = await h.wait_for("permission-request")
    h.agent.approve(session.id, request.request_id, "unattended")
    await asyncio.wait_for(turn, 10)
    content = result_of(h, 1)["content"]
    assert content.startswith("Not done: the user is not at a terminal")
    assert "Their feedback" not in content and "rejected" not in content
    assert not (h.root / "x").exists()


async def test_a_rejected_plan_asks_for_a_revised_plan_and_nothing_else(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("exit_plan", {"plan": "1. rewrite it all"})), reply(text("ok")))
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    turn = asyncio.create_task(h.agent.prompt(session.id, "plan it"))
    request = await h.wait_for("permission-request")
    h.agent.approve(session.id, request.request_id, "reject", "smaller steps")
    await asyncio.wait_for(turn, 10)
    content = result_of(h, 1)["content"]
    assert "Their feedback: smaller steps" in content
    assert "Do not present the same plan again" in content and "End the turn" not in content


async def test_a_plan_with_no_one_to_approve_it_only_ends_the_turn(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("exit_plan", {"plan": "1. rewrite it all"})), reply(text("ok")))
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    turn = asyncio.create_task(h.agent.prompt(session.id, "plan it"))
    request = await h.wait_for("permission-request")
    h.agent.approve(session.id, request.request_id, "unattended")
    await asyncio.wait_for(turn, 10)
    content = result_of(h, 1)["content"]
    assert "end the turn now" in content and "Do not call exit_plan again" in content
    assert "Revise" not in content and "revise" not in content
