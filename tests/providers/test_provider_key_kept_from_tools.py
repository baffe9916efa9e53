"""A provider's API key (its apiKeyEnv variable) is kept from what agentls starts: the model's
bash commands see neither its name nor its value, as with the ANTHROPIC_ variables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chat_completions_api import ChatCompletionsServer, reply, tool_call

KEY_ENV = "AGENTLS_TEST_KEPT_KEY"


@pytest.fixture
def chat() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(api_key="sk-kept-0123456789") as server:
        yield server


async def test_bash_never_sees_the_providers_key(
    make_agent: Any, chat: ChatCompletionsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-kept-0123456789")
    command = f"env; echo name=${{{KEY_ENV}:-unset}}"
    chat.enqueue(reply("", tool_call("bash", {"command": command})), reply("done"))
    provider = {"type": "openai", "baseUrl": chat.url, "apiKeyEnv": KEY_ENV}
    harness = await make_agent({"model": "local/m", "providers": {"local": provider}})
    result = await harness.prompt("show the environment")

    assert result.finish_reason == "end_turn", result.error
    # The key was used (the server checks it) ...
    assert chat.requests[-1].headers["authorization"] == "Bearer sk-kept-0123456789"
    # ... and the command's output, sent back to the model, holds neither the name nor the value.
    tool_message = next(m for m in chat.requests[-1].body["messages"] if m["role"] == "tool")
    output = tool_message["content"]
    assert "name=unset" in output and "PATH=" in output
    assert "sk-kept" not in output and f"{KEY_ENV}=" not in output
