"""Tests for the Messages API test double, driven through the real anthropic SDK."""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam

from messages_api import (
    ErrorReply,
    MessagesAPIServer,
    Reply,
    ReplySpec,
    cache_prefix_problem,
    cache_prefixes,
    connection_reset,
    cut_after,
    error,
    estimate_input_tokens,
    load_script,
    malformed_sse,
    reply,
    reply_from_json,
    reply_to_json,
    stream_error,
    text,
    thinking,
    tool_use,
    write_script,
)
from messages_api.validation import BLOCK_RULES, RULES, validate_request

MODEL = "claude-test"
REPO = Path(__file__).resolve().parents[2]
USER: MessageParam = {"role": "user", "content": "hi"}


@pytest.fixture
def srv() -> Iterator[MessagesAPIServer]:
    with MessagesAPIServer() as server:
        yield server


_SSL = ssl.create_default_context()  # building one per client costs ~50 ms
_OPEN: list[anthropic.Anthropic | anthropic.AsyncAnthropic] = []  # closed after each test


def aclient(srv: MessagesAPIServer | str, api_key: str = "test") -> anthropic.AsyncAnthropic:
    url = srv if isinstance(srv, str) else srv.url
    http = anthropic.DefaultAsyncHttpxClient(verify=_SSL)
    client = anthropic.AsyncAnthropic(
        base_url=url, api_key=api_key, max_retries=0, http_client=http
    )
    _OPEN.append(client)
    return client


def sclient(srv: MessagesAPIServer | str, api_key: str = "test") -> anthropic.Anthropic:
    url = srv if isinstance(srv, str) else srv.url
    http = anthropic.DefaultHttpxClient(verify=_SSL)
    client = anthropic.Anthropic(base_url=url, api_key=api_key, max_retries=0, http_client=http)
    _OPEN.append(client)
    return client


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    yield
    while _OPEN:
        client = _OPEN.pop()
        if isinstance(client, anthropic.AsyncAnthropic):
            await client.close()
        else:
            client.close()


def body(messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "messages": messages, **extra}


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


# --------------------------------------------------------------------------- validation

TOOL = {"name": "read", "input_schema": {"type": "object"}}
TU = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}
TR = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


def asst(*blocks: dict[str, Any]) -> Any:
    return {"role": "assistant", "content": list(blocks)}


def user(*blocks: dict[str, Any]) -> Any:
    return {"role": "user", "content": list(blocks)}


def cc(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": {"type": "ephemeral"}}


TXT = {"type": "text", "text": "x"}

INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("no model", {"max_tokens": 5, "messages": [USER]}, "model: Field required"),
    ("no max_tokens", {"model": MODEL, "messages": [USER]}, "max_tokens: Field required"),
    ("no messages", {"model": MODEL, "max_tokens": 5}, "messages: Field required"),
    ("empty messages", body([]), "at least one message"),
    ("extra key", body([USER], temperatur=1), "temperatur: Extra inputs are not permitted"),
    ("first not user", body([asst(TXT), USER]), 'first message must use the "user" role'),
    ("bad role", body([USER, {"role": "system", "content": "x"}]), "messages.1.role"),
    ("empty string", body([{"role": "user", "content": ""}]), "must have non-empty content"),
    ("empty list", body([USER, asst(), USER]), "messages.1: all messages must have non-empty"),
    (
        "empty text",
        body([user({"type": "text", "text": ""})]),
        "text content blocks must be non-empty",
    ),
    ("blank text", body([user({"type": "text", "text": "  "})]), "non-whitespace text"),
    ("trailing ws", body([USER, {"role": "assistant", "content": "a "}]), "trailing whitespace"),
    (
        "unanswered tool_use",
        body([USER, asst(TU), USER]),
        "without `tool_result` blocks immediately after: toolu_1",
    ),
    ("tool_use at end", body([USER, asst(TU)]), "toolu_1"),
    (
        "unexpected id",
        body([USER, asst(TU), user(TR, {**TR, "tool_use_id": "toolu_2"})]),
        "unexpected `tool_use_id` found in `tool_result` blocks: toolu_2",
    ),
    (
        "result not after use",
        body([USER, asst(TU), user(TR), asst(TXT), user(TR)]),
        "unexpected `tool_use_id`",
    ),
    ("result not first", body([USER, asst(TU), user(TXT, TR)]), "must come first"),
    (
        "result first across merged user turn",
        body([USER, asst(TU), user(TXT), user(TR)]),
        "must come first",
    ),
    (
        "duplicate tool_use ids",
        body([USER, asst(TU), user(TR), asst(TU), user(TR)]),
        "ids must be unique",
    ),
    (
        "bad tool_use id",
        body([USER, asst({**TU, "id": "bad id"}), user({**TR, "tool_use_id": "bad id"})]),
        "String should match pattern",
    ),
    ("tool_result in assistant", body([USER, asst(TR)]), "only allowed in user messages"),
    ("bad tool name", body([USER], tools=[{**TOOL, "name": "a.b"}]), "tools.0.custom.name"),
    ("dup tool names", body([USER], tools=[TOOL, TOOL]), "Tool names must be unique"),
    ("no input_schema", body([USER], tools=[{"name": "x"}]), "input_schema: Field required"),
    (
        "schema not object",
        body([USER], tools=[{"name": "x", "input_schema": {"type": "string"}}]),
        "input_schema.type: Input should be 'object'",
    ),
    (
        "too many cache_control",
        body([user(cc(TXT), cc(TXT))], system=[cc(TXT), cc(TXT)], tools=[cc(TOOL)]),
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    (
        "thinking without signature",
        body([USER, asst({"type": "thinking", "thinking": "t"}, TXT), USER]),
        "thinking.signature: Field required",
    ),
    (
        "empty text in tool_result",
        body([USER, asst(TU), user({**TR, "content": [{"type": "text", "text": ""}]})]),
        "must be non-empty",
    ),
    ("tool_choice without tools", body([USER], tool_choice={"type": "any"}), "tool_choice"),
    (
        "thinking budget",
        body([USER], thinking={"type": "enabled", "budget_tokens": 2048}),
        "max_tokens must be greater than thinking.budget_tokens",
    ),
]

VALID: list[tuple[str, dict[str, Any]]] = [
    ("merged consecutive roles", body([USER, USER, asst(TXT), asst(TU), user(TR, TXT), user(TXT)])),
    ("final assistant empty", body([USER, {"role": "assistant", "content": ""}])),
    (
        "thinking with signature",
        body(
            [USER, asst({"type": "thinking", "thinking": "t", "signature": "s"}, TU), user(TR)],
            thinking={"type": "enabled", "budget_tokens": 1024},
            max_tokens=2048,
        ),
    ),
    ("four cache_control", body([user(cc(TXT), cc(TXT))], system=[cc(TXT)], tools=[cc(TOOL)])),
    ("server tool", body([USER], tools=[{"type": "web_search_20250305", "name": "web_search"}])),
]


@pytest.mark.parametrize(
    ("req", "expected"), [(b, e) for _, b, e in INVALID], ids=[c for c, _, _ in INVALID]
)
def test_validation_rejects(srv: MessagesAPIServer, req: dict[str, Any], expected: str) -> None:
    srv.enqueue("must not be consumed")
    with pytest.raises(anthropic.BadRequestError) as info:
        sclient(srv).post("/v1/messages", cast_to=object, body=req)
    exc = info.value
    assert exc.type == "invalid_request_error"
    assert exc.api_message is not None and expected in exc.api_message, exc.api_message
    assert srv.pending == 1
    assert srv.requests[-1].rejected and srv.requests[-1].status == 400


@pytest.mark.parametrize("req", [b for _, b in VALID], ids=[c for c, _ in VALID])
def test_validation_accepts(srv: MessagesAPIServer, req: dict[str, Any]) -> None:
    res = sclient(srv).post("/v1/messages", cast_to=object, body=req)
    assert isinstance(res, dict) and res["type"] == "message"


def test_validation_rules_each_name_their_rule() -> None:
    rules = [*RULES, *BLOCK_RULES.values()]
    assert len({rule.__name__ for rule in rules}) == len(rules)
    for rule in rules:
        assert rule.__doc__ and rule.__doc__.strip(), f"{rule.__name__} says no rule"
    assert validate_request(body([USER])) is None
    for _, req, expected in INVALID:
        problem = validate_request(req)
        assert problem is not None and expected in problem, (req, problem)
    # count_tokens takes no max_tokens and checks no max_tokens against a thinking budget.
    assert validate_request({"model": MODEL, "messages": [USER]}, count_tokens=True) is None


def test_validation_via_sdk_create(srv: MessagesAPIServer) -> None:
    client = sclient(srv)
    with pytest.raises(anthropic.BadRequestError, match="toolu_9"):
        client.messages.create(
            model=MODEL, max_tokens=64, messages=[USER, asst({**TU, "id": "toolu_9"}), USER]
        )


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
    assert (await asyncio.wait_for(nxt, 2)).type == "content_block_start"
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


# --------------------------------------------------------------------------- script / subprocess


def test_script_json_roundtrip(tmp_path: Path) -> None:
    replies: list[ReplySpec] = [
        reply(
            thinking("t", signature="s"),
            text("a"),
            tool_use("read", {"p": 1}, id="toolu_x"),
            usage={"input_tokens": 3},
            chunk_size=2,
            delay_s=0.5,
            cut_after=4,
        ),
        error(429, "rate_limit_error", "slow down", headers={"retry-after": "2"}),
        stream_error(5, "api_error", "boom"),
        reply(text("h"), hold=threading.Event(), ping=False),
        connection_reset(),
        malformed_sse(3),
    ]
    path = write_script(tmp_path / "s.json", replies, default="dflt")
    loaded, default = load_script(path)
    assert [reply_to_json(r) for r in loaded] == [reply_to_json(r) for r in replies]
    assert isinstance(default, Reply) and default.blocks[0].text == "dflt"  # type: ignore[union-attr]
    assert isinstance(loaded[1], ErrorReply) and loaded[1].headers == {"retry-after": "2"}
    assert isinstance(loaded[3], Reply) and loaded[3].hold is not None
    # short forms
    short = reply_from_json({"blocks": ["hi", {"type": "tool_use", "name": "ls"}]})
    assert isinstance(short, Reply) and short.effective_stop_reason == "tool_use"
    assert short.blocks[1].id.startswith("toolu_01")  # type: ignore[union-attr]


def test_subprocess_mode(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "script.json", [reply(text("from script"), tool_use("read", {"path": "a"}))]
    )
    record = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "messages_api", "--port", "0", "--script", str(script),
         "--record", str(record)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:"), line
        url = line.split(" ", 1)[1]
        client = sclient(url)
        with client.messages.stream(model=MODEL, max_tokens=64, messages=[USER]) as s:
            msg = s.get_final_message()
        assert msg.content[0].text == "from script"  # type: ignore[union-attr]
        assert msg.content[1].input == {"path": "a"}  # type: ignore[union-attr]
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(model=MODEL, max_tokens=64, messages=[])
        lines = [json.loads(x) for x in record.read_text().splitlines()]
        assert [x["status"] for x in lines] == [200, 400]
        assert lines[0]["body"]["messages"] == [USER] and lines[1]["rejected"] is True

        # control endpoints: enqueue a held stream, see it arrive, release it
        def control(path: str, data: Any = None) -> Any:
            raw = None if data is None else json.dumps(data).encode()
            with urllib.request.urlopen(
                urllib.request.Request(url + path, data=raw), timeout=5
            ) as r:
                return json.loads(r.read())

        assert control("/_test/enqueue", [{"blocks": ["held"], "hold": True}]) == {"pending": 1}
        out: list[str] = []
        t = threading.Thread(
            target=lambda: out.append(
                client.messages.create(model=MODEL, max_tokens=5, messages=[USER]).content[0].text  # type: ignore[union-attr]
            )
        )
        t.start()
        deadline = time.monotonic() + 5
        while len(control("/_test/requests")) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert control("/_test/release") == {"released": 1}
        t.join(5)
        assert out == ["held"]
        # a stream's timestamps: when it went on after a hold, when its last byte went out
        control("/_test/enqueue", [{"blocks": ["held stream"], "hold": True}])

        def streamed() -> None:
            with client.messages.stream(model=MODEL, max_tokens=5, messages=[USER]) as s:
                out.append(s.get_final_message().content[0].text)  # type: ignore[union-attr]

        t = threading.Thread(target=streamed)
        t.start()
        deadline = time.monotonic() + 5
        while control("/_test/release")["released"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        t.join(5)
        assert out == ["held", "held stream"]
        first, held = control("/_test/requests")[0], control("/_test/requests")[-1]
        while held["finished_at"] is None and time.monotonic() < deadline:
            time.sleep(0.01)  # the client may have read the last byte just before it was stamped
            held = control("/_test/requests")[-1]
        assert first["finished_at"] is not None and first["resumed_at"] is None
        assert held["resumed_at"] is not None and held["finished_at"] >= held["resumed_at"]
        assert control("/_test/clear", {}) == {"cleared": True}
        assert control("/_test/requests") == []
    finally:
        proc.terminate()
        proc.communicate(timeout=5)  # also closes the pipes
    assert proc.returncode == 0


# --------------------------------------------------------------------------- prompt caching

EPH = {"type": "ephemeral"}
TOOL = {"name": "read", "description": "d", "input_schema": {"type": "object"}}


def cached_body(messages: list[Any]) -> dict[str, Any]:
    return body(
        messages,
        tools=[{**TOOL, "cache_control": EPH}],
        system=[{"type": "text", "text": "system prompt " * 20, "cache_control": EPH}],
    )


def turn(n: int, *, mark: bool) -> list[Any]:
    """A conversation of n user turns; the last user message marked when `mark`."""
    out: list[Any] = []
    for k in range(n):
        block: dict[str, Any] = {"type": "text", "text": f"question {k} " * 10}
        if mark and k == n - 1:
            block = {**block, "cache_control": EPH}
        out.append({"role": "user", "content": [block]})
        if k < n - 1:
            out.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]})
    return out


def test_cache_prefixes_ignore_the_markers_and_follow_cache_order() -> None:
    first = cached_body(turn(1, mark=True))
    prefixes = cache_prefixes(first)
    assert len(prefixes) == 3
    assert prefixes[0].startswith('{"model":"claude-test"}') and "cache_control" not in prefixes[2]
    # tools, then system, then messages: each prefix extends the one before.
    assert prefixes[1].startswith(prefixes[0]) and prefixes[2].startswith(prefixes[1])
    assert '"name":"read"' in prefixes[0] and "system prompt" not in prefixes[0]
    # The next request marks the previous newest message again: a cache read.
    second = cached_body(turn(2, mark=True))
    second["messages"][0]["content"][0]["cache_control"] = EPH
    assert cache_prefix_problem(first, second) is None
    # Without a breakpoint there, or with changed bytes before it, no read.
    unmarked = cached_body(turn(2, mark=True))
    assert "no breakpoint there" in (cache_prefix_problem(first, unmarked) or "")
    changed = cached_body(turn(2, mark=True))
    changed["system"][0]["text"] = "another prompt"
    assert "differs" in (cache_prefix_problem(first, changed) or "")


def test_simulated_cache_reports_reads_and_writes() -> None:
    with MessagesAPIServer(simulate_cache=True) as srv:
        client = sclient(srv)
        first = cached_body(turn(1, mark=True))
        m1 = client.messages.create(**first)
        second = cached_body(turn(2, mark=True))
        second["messages"][0]["content"][0]["cache_control"] = EPH
        m2 = client.messages.create(**second)
        prefixes1, prefixes2 = cache_prefixes(first), cache_prefixes(second)
    assert m1.usage.cache_read_input_tokens == 0
    assert m1.usage.cache_creation_input_tokens == len(prefixes1[-1]) // 4
    assert m2.usage.cache_read_input_tokens == len(prefixes1[-1]) // 4
    assert m2.usage.cache_creation_input_tokens == (len(prefixes2[-1]) - len(prefixes1[-1])) // 4
    # Off by default: no cache fields.
    with MessagesAPIServer() as plain:
        m3 = sclient(plain).messages.create(**first)
    assert m3.usage.cache_read_input_tokens == 0 and m3.usage.cache_creation_input_tokens == 0
