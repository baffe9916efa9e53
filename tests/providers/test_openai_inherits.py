"""What the turn does around the provider works the same through the OpenAI-compatible one:
visible retries, cancel, compaction and the doom loop (the real provider factory, the local Chat
Completions server)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentls.session.compaction import COMPACTION_SYSTEM_PROMPT
from chat_completions_api import ChatCompletionsServer, reply, tool_call


@pytest.fixture
def chat() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer() as server:
        yield server


def settings(chat: ChatCompletionsServer, **more: Any) -> dict[str, Any]:
    local = {"type": "openai", "baseUrl": chat.url,
             "models": {"qwen3": {"contextWindow": 20_000, "maxOutput": 2_000}}}  # fmt: skip
    return {"model": "local/qwen3", "providers": {"local": local}, **more}


def accepted(chat: ChatCompletionsServer) -> list[dict[str, Any]]:
    rejected = [r.error for r in chat.all_requests if r.rejected]
    assert not rejected, rejected
    return [r.body for r in chat.requests]


async def test_a_broken_stream_is_retried_visibly(
    make_agent: Any, chat: ChatCompletionsServer
) -> None:
    chat.enqueue(reply("lost half", cut_after=3), reply("Whole answer."))
    harness = await make_agent(settings(chat))
    result = await harness.prompt("hi")
    assert result.finish_reason == "end_turn" and result.text == "Whole answer."
    retries = [e for e in harness.events if e.type == "retry"]
    assert len(retries) == 1 and "peer closed connection" in retries[0].reason


async def test_the_doom_loop_stops_the_same_call_repeated(
    make_agent: Any, chat: ChatCompletionsServer
) -> None:
    same = {"path": "calc.py"}
    chat.enqueue(*[reply(tool_call("read", same)) for _ in range(5)])
    harness = await make_agent(settings(chat))
    result = await harness.prompt("read it forever")
    assert result.finish_reason == "doom_loop"
    accepted(chat)


async def test_cancel_mid_stream_leaves_the_session_usable(
    make_agent: Any, chat: ChatCompletionsServer
) -> None:
    chat.enqueue(reply("a slow answer " * 20, delay_s=0.05, chunk_size=2), reply("Still here."))
    harness = await make_agent(settings(chat))
    session = await harness.agent.new_session()
    turn = asyncio.create_task(harness.agent.prompt(session.id, "talk slowly"))
    while not [e for e in harness.events if e.type == "text-delta"]:
        await asyncio.sleep(0.01)
    await harness.agent.cancel(session.id)
    first = await turn
    assert first.finish_reason == "cancelled"
    second = await harness.agent.prompt(session.id, "and now?")
    assert second.finish_reason == "end_turn" and second.text == "Still here."
    sent = accepted(chat)[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    # The text shown before the cancel is kept, and sent.
    assert sent[2]["content"] and ("a slow answer " * 20).startswith(sent[2]["content"])


async def test_compaction_summarizes_through_the_local_model(
    make_agent: Any, chat: ChatCompletionsServer
) -> None:
    big = {"prompt_tokens": 17_500, "completion_tokens": 20}  # past 80% of the 20,000 window
    chat.enqueue(
        reply(tool_call("read", {"path": "calc.py"}), usage=big),
        reply("SUMMARY: the user asked to read calc.py; it defines mean and median."),
        reply("Done."),
    )
    harness = await make_agent(settings(chat, compactKeepRecentTokens=100))
    result = await harness.prompt("Read calc.py")
    assert result.finish_reason == "end_turn", result.error
    bodies = accepted(chat)
    assert [b["messages"][0]["content"] == COMPACTION_SYSTEM_PROMPT for b in bodies] == [
        False, True, False,
    ]  # fmt: skip
    assert "tools" not in bodies[1]
    assert "SUMMARY: the user asked" in json.dumps(bodies[2]["messages"])
    statuses = [e.status for e in harness.events if e.type == "compaction"]
    assert statuses == ["started", "done"]
