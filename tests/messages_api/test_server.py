"""The Messages-API server driven through the real anthropic SDK: streams, plain answers, recorded
requests, errors, auth, and the faults a reply can ask for (cuts, resets, holds, broken frames)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import anthropic
import httpx2
import pytest

from messages_api import (
    MessagesAPIServer,
    Reply,
    connection_reset,
    cut_after,
    error,
    estimate_input_tokens,
    malformed_sse,
    reply,
    stream_error,
    text,
    thinking,
    tool_use,
)
from tests.messages_api.conftest import MODEL, USER, aclient, body, sclient

# --------------------------------------------------------------------------- streaming


async def test_stream_text_and_tool_use_raw_events(srv: MessagesAPIServer) -> None:
    tu = tool_use("read", {"path": "a.py", "n": [1, 2]}, id="toolu_01abc")
    srv.enqueue(reply(text("Hello, world!"), tu))
    client = aclient(srv)
    stream = await client.messages.create(model=MODEL, max_tokens=64, messages=[USER], stream=True)
    events = [e async for e in stream]
    types = [e.type for e in events]
    assert types[0] == "message_start"
    assert types[-2:] == ["message_delta", "message_stop"]
    start = events[0]
    assert start.type == "message_start"
    assert start.message.content == [] and start.message.stop_reason is None
    assert start.message.usage.input_tokens == estimate_input_tokens(body([USER]))
    assert start.message.usage.cache_read_input_tokens == 0
    assert start.message.usage.cache_creation_input_tokens == 0

    starts = [e for e in events if e.type == "content_block_start"]
    assert [s.content_block.type for s in starts] == ["text", "tool_use"]
    assert starts[1].content_block.id == "toolu_01abc"  # type: ignore[union-attr]
    assert starts[1].content_block.input == {}  # type: ignore[union-attr]
    deltas = [e for e in events if e.type == "content_block_delta"]
    text_parts = [d.delta.text for d in deltas if d.delta.type == "text_delta"]
    json_parts = [d.delta.partial_json for d in deltas if d.delta.type == "input_json_delta"]
    assert len(text_parts) > 1 and "".join(text_parts) == "Hello, world!"
    assert len(json_parts) > 2 and json.loads("".join(json_parts)) == tu.input
    assert [e.index for e in events if e.type == "content_block_stop"] == [0, 1]
    delta = events[-2]
    assert delta.type == "message_delta"
    assert delta.delta.stop_reason == "tool_use"
    assert delta.usage.output_tokens >= 1
    assert srv.requests[0].stream is True


async def test_stream_helper_final_message(srv: MessagesAPIServer) -> None:
    srv.enqueue(
        reply(
            thinking("let me think", signature="sig-1"),
            text("The answer"),
            tool_use("grep", {"pattern": "x"}),
            usage={"cache_read_input_tokens": 7, "output_tokens": 42},
        )
    )
    scripted = srv._queue[0]
    assert isinstance(scripted, Reply)
    client = aclient(srv)
    async with client.messages.stream(model=MODEL, max_tokens=64, messages=[USER]) as stream:
        msg = await stream.get_final_message()
    assert [b.type for b in msg.content] == ["thinking", "text", "tool_use"]
    assert msg.content[0].thinking == "let me think"  # type: ignore[union-attr]
    assert msg.content[0].signature == "sig-1"  # type: ignore[union-attr]
    assert msg.content[1].text == "The answer"  # type: ignore[union-attr]
    assert msg.content[2].input == {"pattern": "x"}  # type: ignore[union-attr]
    assert msg.content[2].id == scripted.blocks[2].id  # type: ignore[union-attr]
    assert msg.stop_reason == "tool_use"
    assert msg.usage.output_tokens == 42
    assert msg.usage.cache_read_input_tokens == 7
    assert msg.model == MODEL


async def test_chunk_size_and_big_stream(srv: MessagesAPIServer) -> None:
    srv.enqueue(reply(text("abcdefghij"), chunk_size=3), reply(text("y" * 4096), chunk_size=1))
    client = aclient(srv)
    for expected in (["abc", "def", "ghi", "j"], None):
        stream = await client.messages.create(
            model=MODEL, max_tokens=64, messages=[USER], stream=True
        )
        parts = [
            e.delta.text
            async for e in stream
            if e.type == "content_block_delta" and e.delta.type == "text_delta"
        ]
        if expected is not None:
            assert parts == expected
        else:
            assert len(parts) == 4096 and "".join(parts) == "y" * 4096


def test_non_streaming_and_default_reply(srv: MessagesAPIServer) -> None:
    client = sclient(srv)
    srv.enqueue("plain", reply(tool_use("ls", {}), stop_reason="max_tokens", model="other"))
    m1 = client.messages.create(model=MODEL, max_tokens=64, messages=[USER])
    assert m1.content[0].text == "plain" and m1.stop_reason == "end_turn"  # type: ignore[union-attr]
    m2 = client.messages.create(model=MODEL, max_tokens=64, messages=[USER])
    assert m2.content[0].type == "tool_use" and m2.stop_reason == "max_tokens"
    assert m2.model == "other"
    m3 = client.messages.create(model=MODEL, max_tokens=64, messages=[USER])
    assert m3.content[0].text == "(no scripted reply)"  # type: ignore[union-attr]
    assert m3.stop_reason == "end_turn"
    assert srv.pending == 0 and len(srv.requests) == 3 and srv.requests[2].stream is False


def test_configurable_default_and_callable_reply() -> None:
    def echo(req: dict[str, Any]) -> Reply:
        last = req["messages"][-1]["content"]
        results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]
        return reply(text(f"saw {results[0]['content']}")) if results else reply(text("none"))

    with MessagesAPIServer(default=error(500, "api_error", "queue empty")) as srv:
        srv.enqueue(reply(tool_use("read", {"path": "a"}, id="toolu_1")), echo)
        client = sclient(srv)
        m1 = client.messages.create(model=MODEL, max_tokens=64, messages=[USER])
        history = [
            USER,
            {"role": "assistant", "content": [b.to_dict() for b in m1.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}],
            },
        ]
        m2 = client.messages.create(model=MODEL, max_tokens=64, messages=history)  # type: ignore[arg-type]
        assert m2.content[0].text == "saw 42"  # type: ignore[union-attr]
        assert m2.usage.input_tokens > m1.usage.input_tokens  # grows with history
        with pytest.raises(anthropic.InternalServerError, match="queue empty"):
            client.messages.create(model=MODEL, max_tokens=64, messages=[USER])


def test_requests_recorded_and_wait(srv: MessagesAPIServer) -> None:
    def worker() -> None:
        time.sleep(0.05)
        sclient(srv).messages.create(model=MODEL, max_tokens=64, messages=[USER], system="sys")

    t = threading.Thread(target=worker)
    t.start()
    recs = srv.wait_for_requests(1, timeout=5)
    t.join()
    assert recs[0].body["system"] == "sys"
    assert recs[0].headers["anthropic-version"]
    assert recs[0].rejected is False and recs[0].status == 200
    with pytest.raises(TimeoutError):
        srv.wait_for_requests(2, timeout=0.05)
    assert srv.bodies == [recs[0].body]


def test_count_tokens(srv: MessagesAPIServer) -> None:
    res = sclient(srv).messages.count_tokens(model=MODEL, messages=[USER])
    assert res.input_tokens == estimate_input_tokens({"messages": [USER]})
    assert srv.requests == [] and len(srv.all_requests) == 1


# --------------------------------------------------------------------------- errors & auth

ERRORS = [
    (429, "rate_limit_error", anthropic.RateLimitError),
    (529, "overloaded_error", anthropic.OverloadedError),
    (500, "api_error", anthropic.InternalServerError),
    (400, "invalid_request_error", anthropic.BadRequestError),
    (401, "authentication_error", anthropic.AuthenticationError),
]


@pytest.mark.parametrize(("status", "etype", "exc_type"), ERRORS)
@pytest.mark.parametrize("streaming", [False, True])
async def test_error_replies(
    srv: MessagesAPIServer, status: int, etype: str, exc_type: type[Exception], streaming: bool
) -> None:
    srv.enqueue(error(status, etype, "scripted failure", headers={"retry-after": "1"}))
    with pytest.raises(exc_type) as info:
        if streaming:
            async with aclient(srv).messages.stream(
                model=MODEL, max_tokens=64, messages=[USER]
            ) as s:
                await s.get_final_message()
        else:
            await aclient(srv).messages.create(model=MODEL, max_tokens=64, messages=[USER])
    exc = info.value
    assert isinstance(exc, anthropic.APIStatusError)
    assert exc.status_code == status and exc.type == etype and exc.api_message == "scripted failure"
    assert exc.response.headers["retry-after"] == "1"
    assert exc.request_id is not None and exc.request_id.startswith("req_")
    assert exc.body == {
        "type": "error",
        "error": {"type": etype, "message": "scripted failure"},
        "request_id": exc.request_id,
    }
    assert srv.requests[0].rejected is False and srv.requests[0].status == status


def test_strict_auth() -> None:
    with MessagesAPIServer(strict_auth=True, api_key="good") as srv:
        good = sclient(srv, api_key="good")
        assert good.messages.create(model=MODEL, max_tokens=5, messages=[USER]).content
        with pytest.raises(anthropic.AuthenticationError, match="invalid x-api-key"):
            sclient(srv, api_key="bad").messages.create(model=MODEL, max_tokens=5, messages=[USER])
        req = urllib.request.Request(
            srv.url + "/v1/messages", data=json.dumps(body([USER])).encode(), method="POST",
            headers={"content-type": "application/json", "anthropic-version": "2023-06-01"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
        assert info.value.code == 401
        assert json.loads(info.value.read())["error"]["type"] == "authentication_error"
        req.add_header("x-api-key", "good")
        with urllib.request.urlopen(req, timeout=5) as res:
            assert json.loads(res.read())["type"] == "message"


# --------------------------------------------------------------------------- faults & timing


async def test_cut_after_drops_connection(srv: MessagesAPIServer) -> None:
    srv.enqueue(cut_after(3, reply(text("abcdefghijkl"), chunk_size=2)), "after")
    client = aclient(srv)
    seen: list[str] = []
    with pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)):
        stream = await client.messages.create(
            model=MODEL, max_tokens=64, messages=[USER], stream=True
        )
        async for e in stream:
            seen.append(e.type)
    assert seen == ["message_start", "content_block_start"]  # ping is filtered by the SDK
    # the server keeps serving on new connections
    msg = await client.messages.create(model=MODEL, max_tokens=64, messages=[USER])
    assert msg.content[0].text == "after"  # type: ignore[union-attr]


def test_cut_after_non_streaming(srv: MessagesAPIServer) -> None:
    srv.enqueue(cut_after(0))
    with pytest.raises(anthropic.APIConnectionError):
        sclient(srv).messages.create(model=MODEL, max_tokens=64, messages=[USER])


async def test_connection_reset_before_any_byte(srv: MessagesAPIServer) -> None:
    srv.enqueue(connection_reset(), "after")
    client = aclient(srv)
    with pytest.raises(anthropic.APIConnectionError):
        await client.messages.create(model=MODEL, max_tokens=64, messages=[USER], stream=True)
    assert srv.requests[0].disconnected and srv.requests[0].reply is not None
    msg = await client.messages.create(model=MODEL, max_tokens=64, messages=[USER])
    assert msg.content[0].text == "after"  # type: ignore[union-attr]


async def test_stream_error_event(srv: MessagesAPIServer) -> None:
    srv.enqueue(stream_error())
    seen: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as info:
        stream = await aclient(srv).messages.create(
            model=MODEL, max_tokens=64, messages=[USER], stream=True
        )
        async for e in stream:
            seen.append(e.type)
    assert seen == ["message_start"]
    assert info.value.type == "overloaded_error"


async def test_malformed_sse_frame_breaks_the_sdk_stream(srv: MessagesAPIServer) -> None:
    srv.enqueue(malformed_sse())
    seen: list[str] = []
    with pytest.raises(json.JSONDecodeError):
        stream = await aclient(srv).messages.create(
            model=MODEL, max_tokens=64, messages=[USER], stream=True
        )
        async for e in stream:
            seen.append(e.type)
    assert seen == ["message_start"]


async def test_delay_between_events(srv: MessagesAPIServer) -> None:
    srv.enqueue(reply(text("abcd"), chunk_size=1, delay_s=0.03))
    t0 = time.monotonic()
    stream = await aclient(srv).messages.create(
        model=MODEL, max_tokens=64, messages=[USER], stream=True
    )
    n = len([e async for e in stream])
    assert n == 9 and time.monotonic() - t0 >= 0.03 * 9  # 10 events incl. ping -> 9 gaps


async def test_hold_until_set(srv: MessagesAPIServer) -> None:
    gate = threading.Event()
    srv.enqueue(reply(text("released"), hold=gate))
    stream = await aclient(srv).messages.create(
        model=MODEL, max_tokens=64, messages=[USER], stream=True
    )
    first = await stream.__anext__()
    assert first.type == "message_start"
    nxt = asyncio.ensure_future(stream.__anext__())
    await asyncio.sleep(0.1)
    assert not nxt.done()
    gate.set()
    assert (await asyncio.wait_for(nxt, 30)).type == "content_block_start"
    rest = [e async for e in stream]
    assert rest[-1].type == "message_stop"


async def test_hold_client_disconnect_is_seen(srv: MessagesAPIServer) -> None:
    srv.enqueue(reply(text("never"), hold=threading.Event()))
    client = aclient(srv)
    stream = await client.messages.create(model=MODEL, max_tokens=64, messages=[USER], stream=True)
    assert (await stream.__anext__()).type == "message_start"
    await stream.close()
    rec = srv.requests[0]
    assert await asyncio.to_thread(rec.done.wait, 3)
    assert rec.disconnected


def test_stop_releases_held_stream() -> None:
    srv = MessagesAPIServer().start()
    srv.enqueue(reply(text("never"), hold=threading.Event()))
    errors: list[BaseException] = []

    def consume() -> None:
        try:
            for _ in sclient(srv).messages.create(
                model=MODEL, max_tokens=5, messages=[USER], stream=True
            ):
                pass
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    t = threading.Thread(target=consume)
    t.start()
    srv.wait_for_requests(1)
    t0 = time.monotonic()
    srv.stop()
    t.join(5)
    assert not t.is_alive() and time.monotonic() - t0 < 3
    assert errors  # the stream was cut when the server stopped


async def test_concurrent_streams(srv: MessagesAPIServer) -> None:
    client = aclient(srv)
    srv.enqueue(*[reply(text(f"r{i}" * 50), chunk_size=5) for i in range(8)])

    async def one() -> str:
        async with client.messages.stream(model=MODEL, max_tokens=64, messages=[USER]) as s:
            return (await s.get_final_message()).content[0].text  # type: ignore[union-attr]

    results = await asyncio.gather(*[one() for _ in range(8)])
    assert sorted(results) == sorted(f"r{i}" * 50 for i in range(8))
