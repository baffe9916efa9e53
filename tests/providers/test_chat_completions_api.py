"""The local Chat Completions server rejects what the real APIs reject: a tool message without
its call, a call without its result (through the real openai SDK)."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from chat_completions_api import ChatCompletionsServer, reply

CALL = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "user", "content": "hi"},
          {"role": "tool", "tool_call_id": "call_1", "content": "out"}],
         "must be a response to a preceeding message with 'tool_calls'"),
        ([{"role": "user", "content": "hi"},
          {"role": "assistant", "content": None, "tool_calls": [CALL]},
          {"role": "user", "content": "and?"}],
         "did not have response messages: call_1"),
        ([{"role": "user", "content": "hi"},
          {"role": "assistant", "content": None, "tool_calls": [CALL]}],
         "did not have response messages: call_1"),
    ],
)  # fmt: skip
async def test_an_invalid_history_is_a_400(messages: list[Any], problem: str) -> None:
    with ChatCompletionsServer([reply("never sent")]) as server:
        client = openai.AsyncOpenAI(base_url=server.url, api_key="k", max_retries=0)
        try:
            with pytest.raises(openai.BadRequestError, match=problem):
                await client.chat.completions.create(model="m", messages=messages, stream=True)
        finally:
            await client.close()
        assert [r.rejected for r in server.all_requests] == [True]


async def test_a_valid_history_streams() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "out"},
    ]
    with ChatCompletionsServer([reply("fine")]) as server:
        client = openai.AsyncOpenAI(base_url=server.url, api_key="k", max_retries=0)
        try:
            stream = await client.chat.completions.create(
                model="m",
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            )
            text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        finally:
            await client.close()
    assert text == "fine"


async def test_the_strict_server_refuses_a_null_content_as_llama_cpp_python_does() -> None:
    tail = [{"role": "tool", "tool_call_id": "call_1", "content": "out"}]
    null = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [CALL]}, *tail]  # fmt: skip
    empty = [null[0], {"role": "assistant", "content": "", "tool_calls": [CALL]}, *tail]
    with ChatCompletionsServer([reply("fine")], strict=True) as server:
        client = openai.AsyncOpenAI(base_url=server.url, api_key="k", max_retries=0)
        try:
            with pytest.raises(openai.InternalServerError, match="validation error") as refused:
                await client.chat.completions.create(model="m", messages=null, stream=True)
            stream = await client.chat.completions.create(
                model="m",
                messages=empty,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            )
            got = [c async for c in stream]
        finally:
            await client.close()
    assert refused.value.status_code == 500
    assert "body.messages.1.typed-dict.content" in str(refused.value)
    assert "".join(c.choices[0].delta.content or "" for c in got if c.choices) == "fine"
    # Like llama-cpp-python, no usage chunk although the request asked for one.
    assert [c.usage for c in got if c.usage] == []
