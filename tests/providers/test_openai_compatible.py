"""The OpenAI-compatible provider against the local Chat Completions server, through the real
provider factory (`providers` setting, model id `local/<model>`) and the real openai SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentls.model.base import (
    ModelRequest,
    ProviderError,
    RetryNotice,
    TextDelta,
    ThinkingDelta,
)
from agentls.model.openai_provider import OpenAIProvider
from chat_completions_api import ChatCompletionsServer, Reply, error, reply, tool_call
from tests.providers.conftest import DEMO_STEPS, NEW


@pytest.fixture
def chat() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(api_key="sk-local-test") as server:
        yield server


def local_settings(chat: ChatCompletionsServer, **more: Any) -> dict[str, Any]:
    provider = {"type": "openai", "baseUrl": chat.url, "apiKeyEnv": "AGENTLS_TEST_LOCAL_KEY"}
    return {"model": "local/qwen3-coder", "providers": {"local": {**provider, **more}}}


def demo_replies() -> list[Reply]:
    out = []
    for text, tool, tool_input in DEMO_STEPS:
        calls = [tool_call(tool, tool_input)] if tool else []
        out.append(reply(text, *calls, reasoning="Thinking about it. " if tool else ""))
    return out


async def test_the_demo_fix_completes_through_the_openai_compatible_provider(
    make_agent: Any, chat: ChatCompletionsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLS_TEST_LOCAL_KEY", "sk-local-test")
    chat.enqueue(*demo_replies())
    harness = await make_agent(local_settings(chat))
    result = await harness.prompt("Run the tests and fix what fails")

    assert result.finish_reason == "end_turn", result.error
    assert result.text.startswith("All tests pass")
    assert NEW in (harness.root / "calc.py").read_text()
    # Every request was valid (a tool message answering each call, in order) and carried the key.
    assert [r.rejected for r in chat.all_requests] == [False] * 5
    assert all(r.headers["authorization"] == "Bearer sk-local-test" for r in chat.requests)
    last = chat.requests[-1].body
    assert last["model"] == "qwen3-coder"
    assert last["stream_options"] == {"include_usage": True}
    assert last["messages"][0]["role"] == "system"
    tool_messages = [m for m in last["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 4
    assert "FAILED" in tool_messages[0]["content"] and "OK" in tool_messages[3]["content"]
    calls = [m["tool_calls"][0] for m in last["messages"] if m.get("tool_calls")]
    assert json.loads(calls[2]["function"]["arguments"])["new_string"] == NEW
    assert {t["function"]["name"] for t in last["tools"]} >= {"bash", "read", "edit"}
    # reasoning_content became thinking; it is stored, and never sent back.
    messages = await harness.store.load_messages(result.session_id)
    thinking = [p for m in messages for p in m.parts if p.type == "thinking"]
    assert len(thinking) == 4 and thinking[0].text == "Thinking about it. "
    assert "Thinking about it" not in json.dumps(last["messages"])
    # Usage from the last chunk; a local model costs nothing.
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.usage.cost_usd == 0


def request(model: str = "qwen3") -> ModelRequest:
    return ModelRequest(
        model=model,
        system=[{"type": "text", "text": "system"}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=[],
        max_tokens=100,
    )


async def test_parallel_calls_in_interleaved_fragments_are_assembled_by_index(
    chat: ChatCompletionsServer,
) -> None:
    a = tool_call("read", {"path": "a.py", "limit": 20})
    b = tool_call("grep", {"pattern": "def median", "path": "."}, id="functions.grep:1")
    chat.enqueue(reply("Two at once.", a, b, fragments=5, chunk_size=2))
    provider = OpenAIProvider(base_url=chat.url, api_key="sk-local-test")
    try:
        events = [e async for e in provider.stream(request())]
    finally:
        await provider.aclose()
    starts = [e for e in events if type(e).__name__ == "BlockStart" and e.kind == "tool_use"]
    # An id Claude would refuse (a later switch sends this history there) is made safe.
    assert [(s.tool_id, s.tool_name) for s in starts] == [
        (a.id, "read"),
        ("functions_grep_1", "grep"),
    ]
    inputs = {e.index: json.loads(e.partial_json) for e in events if hasattr(e, "partial_json")}
    assert list(inputs.values()) == [a.arguments, b.arguments]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Two at once."
    assert events[-1].stop_reason == "tool_use"


async def test_a_cut_stream_and_an_error_in_the_stream_are_retried_a_503_reported(
    chat: ChatCompletionsServer,
) -> None:
    chat.enqueue(reply("lost", cut_after=2), reply("error", error_after=2), reply("kept"))
    chat.enqueue(*[error(503, "overloaded", "server_error")] * 3)
    provider = OpenAIProvider(
        base_url=chat.url, api_key="sk-local-test", base_delay_s=0.01, max_attempts=3
    )
    try:
        events = [e async for e in provider.stream(request())]
        notices = [e for e in events if isinstance(e, RetryNotice)]
        assert "peer closed connection" in notices[0].reason
        assert notices[1].reason.startswith("error in the stream: The server had an error")
        after = events.index(notices[1])
        texts = [e.text for e in events[after:] if isinstance(e, TextDelta)]
        assert "".join(texts) == "kept"
        with pytest.raises(ProviderError, match="after 3 attempts.*HTTP 503"):
            _ = [e async for e in provider.stream(request())]
    finally:
        await provider.aclose()


async def test_reasoning_field_of_ollama_is_thinking_and_length_drops_a_cut_call(
    chat: ChatCompletionsServer,
) -> None:
    chat.enqueue(
        reply(
            "",
            tool_call("read", raw='{"path": "a'),
            reasoning="hmm",
            reasoning_field="reasoning",
            finish_reason="length",
        )  # fmt: skip
    )
    provider = OpenAIProvider(base_url=chat.url, api_key="sk-local-test")
    try:
        events = [e async for e in provider.stream(request())]
    finally:
        await provider.aclose()
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "hmm"
    assert not any(getattr(e, "kind", None) == "tool_use" for e in events)
    assert events[-1].stop_reason == "max_tokens"


async def test_a_missing_key_says_which_variable(
    make_agent: Any, chat: ChatCompletionsServer
) -> None:
    harness = await make_agent(local_settings(chat))
    result = await harness.prompt("hi")
    assert result.finish_reason == "error"
    assert "AGENTLS_TEST_LOCAL_KEY" in (result.error or "")
    assert chat.all_requests == []


@pytest.fixture
def strict() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(api_key="sk-local-test", strict=True) as server:
        yield server


async def test_a_tool_using_turn_completes_against_the_strictest_dialect_with_estimated_usage(
    make_agent: Any, strict: ChatCompletionsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLS_TEST_LOCAL_KEY", "sk-local-test")
    steps = demo_replies()
    steps[1].text = ""  # a call with no text: its message's content is "" (never null)
    strict.enqueue(*steps)
    harness = await make_agent(local_settings(strict))
    result = await harness.prompt("Run the tests and fix what fails")

    assert result.finish_reason == "end_turn", result.error
    assert NEW in (harness.root / "calc.py").read_text()
    assert [r.status for r in strict.all_requests] == [200] * 5
    sent = [m for m in strict.requests[-1].body["messages"] if m.get("tool_calls")]
    assert [m["content"] for m in sent][:2] == ["Running the tests first.", ""]
    for call in (m["tool_calls"][0] for m in sent):
        assert call["type"] == "function" and isinstance(call["id"], str)
        assert isinstance(json.loads(call["function"]["arguments"]), dict)
    # The server sent no usage: the tokens are estimated, and marked so, stored with the steps.
    assert result.usage.estimated is True
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    messages = await harness.store.load_messages(result.session_id)
    steps_usage = [m.usage for m in messages if m.role == "assistant" and m.usage]
    assert len(steps_usage) == 5 and all(u.estimated for u in steps_usage)


async def test_usage_the_server_reports_is_not_marked_estimated(
    chat: ChatCompletionsServer,
) -> None:
    chat.enqueue(reply("hi", usage={"prompt_tokens": 12, "completion_tokens": 3}))
    provider = OpenAIProvider(base_url=chat.url, api_key="sk-local-test")
    try:
        events = [e async for e in provider.stream(request())]
    finally:
        await provider.aclose()
    end = events[-1]
    assert (end.usage.input_tokens, end.usage.output_tokens, end.usage.estimated) == (12, 3, False)


LLAMA_CPP_500 = (
    "1 validation error for CreateChatCompletionRequest\n"
    "body.messages.1.typed-dict.content\n"
    "  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]\n"
    "    For further information visit https://errors.pydantic.dev/2.9/v/string_type"
)


@pytest.mark.parametrize(
    ("refusal", "said"),
    [
        (error(500, LLAMA_CPP_500, "internal_server_error"),
         "(HTTP 500): body.messages.1.typed-dict.content: Input should be a valid string"),
        (error(400, "'tools' is not supported by this model"),
         "(HTTP 400): 'tools' is not supported by this model"),
        (error(422, "Field required: messages"), "(HTTP 422): Field required: messages"),
    ],
)  # fmt: skip
async def test_a_request_the_server_refuses_is_not_retried_and_said_in_one_sentence(
    chat: ChatCompletionsServer, refusal: Any, said: str
) -> None:
    chat.enqueue(refusal, reply("never asked"))
    provider = OpenAIProvider(
        name="llama", base_url=chat.url, api_key="sk-local-test", base_delay_s=0.01
    )
    try:
        with pytest.raises(ProviderError) as failed:
            _ = [e async for e in provider.stream(request())]
    finally:
        await provider.aclose()
    assert len(chat.all_requests) == 1
    assert failed.value.attempts == 1 and failed.value.kind == "bad_request"
    message = str(failed.value)
    assert f"the llama provider's server ({chat.url}) refused the request {said}" in message
    assert "\n" not in message and "errors.pydantic.dev" not in message


async def test_a_5xx_that_is_no_validation_error_is_still_retried(
    chat: ChatCompletionsServer,
) -> None:
    chat.enqueue(error(500, "CUDA out of memory", "internal_server_error"), reply("kept"))
    provider = OpenAIProvider(base_url=chat.url, api_key="sk-local-test", base_delay_s=0.01)
    try:
        events = [e async for e in provider.stream(request())]
    finally:
        await provider.aclose()
    assert sum(isinstance(e, RetryNotice) for e in events) == 1
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "kept"
