"""Retry (Agent.retry): a turn that failed goes on from its failed step, its completed steps and
tool results kept, the failed model call made again; refused when there is nothing to retry or
a turn runs."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.session import Agent, NothingToRetry
from messages_api import MessagesAPIServer, error, reply, text, tool_use
from tests.conftest import HarnessFactory


async def test_retry_after_the_api_comes_back_goes_on_from_the_failed_step(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"apiMaxAttempts": 1})
    (h.root / "a.txt").write_text("alpha\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"}), usage={"input_tokens": 100}),
        reply(text("half an answer"), cut_after=5),  # the second step fails midway
    )
    session = await h.agent.new_session()
    failed = await h.agent.prompt(session.id, "read a.txt")
    assert failed.finish_reason == "error" and failed.failure is not None
    assert failed.failure.kind == "network" and failed.failure.retryable
    api.stop()  # the API is down now: a retry fails the same way, and keeps the session as is
    down = await h.agent.retry(session.id)
    assert down.failure is not None and down.failure.message.startswith(
        "The model's API could not be reached: the connection was refused"
    )
    api.start()  # it is back
    api.enqueue(reply(text("alpha it is")))
    result = await h.agent.retry(session.id)
    assert result.finish_reason == "end_turn" and result.text == "alpha it is"
    assert [e.retry for e in h.of_type("turn-start")] == [None, True, True]
    # The read ran once; the retried call carried the prompt once and the read's result.
    assert len([e for e in h.of_type("tool-result") if e.tool == "read"]) == 1
    last = h.accepted_requests()[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user"]
    assert last[0]["content"][0]["text"] == "read a.txt"
    assert "alpha" in str(last[2]["content"])
    # The failed steps stay for the record, no longer sent; the answer follows them.
    loaded = await h.store.load_messages(session.id, repair=False)
    assert [(m.role, m.finish_reason, m.reverted) for m in loaded] == [
        ("user", None, False),
        ("assistant", "tool_use", False),
        ("assistant", "error", True),
        ("assistant", "error", True),
        ("assistant", "end_turn", False),
    ]
    assert loaded[-1].text() == "alpha it is"
    # Nothing failed now: a second retry is refused.
    with pytest.raises(NothingToRetry, match="did not end with an error"):
        await h.agent.retry(session.id)


async def test_retry_is_refused_without_a_failed_turn_or_while_a_turn_runs(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    session = await h.agent.new_session()
    with pytest.raises(NothingToRetry, match="nothing to retry"):
        await h.agent.retry(session.id)
    api.enqueue(error(401, "authentication_error"))
    assert (await h.agent.prompt(session.id, "go")).finish_reason == "error"
    hold = threading.Event()
    api.enqueue(reply(text("slow"), hold=hold))
    running = asyncio.create_task(h.agent.prompt(session.id, "next"))
    await h.wait_for("turn-start", 2)
    with pytest.raises(NothingToRetry, match="a turn is running"):
        await h.agent.retry(session.id)
    hold.set()
    assert (await running).text == "slow"
    with pytest.raises(KeyError):
        await h.agent.retry("ses_unknown")
    child = await h.agent.new_session()
    await h.store.set_parent(child.id, session.id, "general")
    h.agent._sessions.pop(child.id)  # read again from the store, as a sub-agent's
    with pytest.raises(NothingToRetry, match="sub-agent's session: retry the turn of its parent"):
        await h.agent.retry(child.id)


async def test_a_retry_can_be_stopped_like_any_turn(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"apiMaxAttempts": 1})
    api.enqueue(error(529, "overloaded_error"))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "go")
    hold = threading.Event()
    api.enqueue(reply(text("never finished"), hold=hold))
    retrying = asyncio.create_task(h.agent.retry(session.id))
    await h.wait_for("turn-start", 2)
    await api_waiting(api)
    assert await h.agent.cancel(session.id)
    assert (await retrying).finish_reason == "cancelled"
    hold.set()


async def api_waiting(api: MessagesAPIServer) -> None:
    await asyncio.to_thread(api.wait_for_requests, 2)


async def test_the_scripted_models_fail_once_step_fails_then_answers_on_retry(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    settings = Settings.model_validate({"model": "scripted:e2e"})
    agent = await Agent.open(settings=settings, root=root, db_path=tmp_path / "db.sqlite")
    try:
        session = await agent.new_session()
        failed = await agent.prompt(session.id, "Answer once the API is back.")
        assert failed.failure is not None and failed.failure.kind == "network"
        assert "ConnectionRefusedError" in failed.failure.details
        retried = await agent.retry(session.id)
        assert retried.text == "The API is back: this answer came through on Retry."
    finally:
        await agent.aclose()
