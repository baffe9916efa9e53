"""Changing model and provider in the middle of a session: Anthropic (with extended thinking) to
a local OpenAI-compatible model and back. The thinking blocks the local server cannot take are
left out of its requests, never out of the stored history, and Claude gets them back after."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentls.config import Settings
from agentls.history import ThinkingPart
from chat_completions_api import ChatCompletionsServer
from chat_completions_api import reply as chat_reply
from messages_api import MessagesAPIServer, reply, text, thinking, tool_use


@pytest.fixture
def chat() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer() as server:
        yield server


async def test_switching_anthropic_to_local_and_back_keeps_the_history_usable(
    make_agent: Any,
    api: MessagesAPIServer,
    chat: ChatCompletionsServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTLS_TEST_ANTHROPIC_KEY", "test-key")
    providers = {
        "anthropic": {"type": "anthropic", "baseUrl": api.url,
                      "apiKeyEnv": "AGENTLS_TEST_ANTHROPIC_KEY"},
        "local": {"type": "openai", "baseUrl": chat.url},
    }  # fmt: skip
    harness = await make_agent(
        {
            "model": "claude-sonnet-5-5",
            "providers": providers,
            "thinking": {"type": "enabled", "budgetTokens": 1024},
        }  # fmt: skip
    )
    api.enqueue(
        reply(
            thinking("Which file? calc.py.", "sig-1"),
            text("Reading."),
            tool_use("read", {"path": "calc.py"}),
        ),  # fmt: skip
        reply(thinking("It has median.", "sig-2"), text("calc.py computes a median.")),
    )
    session = await harness.agent.new_session()
    first = await harness.agent.prompt(session.id, "What is in calc.py?")
    assert first.finish_reason == "end_turn", first.error

    await harness.agent.set_model(session.id, "local/qwen3")
    chat.enqueue(chat_reply("It also has mean."))
    second = await harness.agent.prompt(session.id, "Anything else?")
    assert second.finish_reason == "end_turn", second.error
    assert [r.rejected for r in chat.all_requests] == [False]
    sent = chat.requests[0].body
    dumped = json.dumps(sent)
    assert "Which file?" not in dumped and "sig-1" not in dumped and "thinking" not in sent
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent["messages"][3]["content"].count("median") >= 1  # the read's output went along

    stored = await harness.store.load_messages(session.id)
    kept = [p for m in stored for p in m.parts if isinstance(p, ThinkingPart)]
    assert [(p.text, p.signature) for p in kept] == [
        ("Which file? calc.py.", "sig-1"),
        ("It has median.", "sig-2"),
    ]

    await harness.agent.set_model(session.id, "claude-sonnet-5-5")
    api.enqueue(reply(thinking("Back.", "sig-3"), text("Done.")))
    third = await harness.agent.prompt(session.id, "Thanks")
    assert third.finish_reason == "end_turn", third.error
    assert not [r for r in api.all_requests if r.rejected]
    last = api.requests[-1].body
    signatures = [b.get("signature") for m in last["messages"] for b in m["content"]
                  if isinstance(b, dict) and b.get("type") == "thinking"]  # fmt: skip
    assert signatures == ["sig-1", "sig-2"]
    assert "It also has mean." in json.dumps(last["messages"])
    # claude-sonnet-5-5 thinks adaptively: the budget asked for is not sent (it would be refused).
    assert last["thinking"] == {"type": "adaptive"}


async def test_new_providers_settings_count_from_the_next_turn(make_agent: Any) -> None:
    with ChatCompletionsServer() as old, ChatCompletionsServer() as new:
        old.enqueue(chat_reply("From the old server."))
        new.enqueue(chat_reply("From the new server."))
        harness = await make_agent(
            {"model": "local/qwen3", "providers": {"local": {"type": "openai", "baseUrl": old.url}}}
        )
        session = await harness.agent.new_session()
        first = await harness.agent.prompt(session.id, "hi")
        assert first.text == "From the old server."
        moved = {"local": {"type": "openai", "baseUrl": new.url}}
        harness.agent.update_settings(harness.agent.settings.model_copy(update={
            "providers": Settings.model_validate({"providers": moved}).providers}))  # fmt: skip
        second = await harness.agent.prompt(session.id, "again")
        assert second.text == "From the new server."
        assert len(old.requests) == 1 and len(new.requests) == 1
