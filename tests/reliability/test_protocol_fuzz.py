"""Protocol fuzzing: hypothesis builds params for every custom method (requests, commands, client
notifications, and the agent settings of didChangeConfiguration) from the pydantic models' JSON
Schema, then mutates them: wrong types, missing and unknown fields, huge strings, deep nesting,
lone surrogates, hostile URIs (devices, FIFOs, other people's files). One long-lived
`agentls serve` takes them all; each request must be answered with a result or a JSON-RPC error,
and after each case the server must still answer agent/listSessions."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentls.config import Settings
from agentls.protocol.models import CLIENT_NOTIFICATIONS, COMMANDS, REQUESTS
from messages_api import MessagesAPIServer, reply, text
from tests.reliability.support import FULL, Figures, Serve, serve_env

JSON_RPC_CODES = {-32700, -32600, -32601, -32602, -32603, -32800, -32801, -32802, -32803}
EXAMPLES = 300 if FULL else 30  # per method; there are 11 of them
HUGE = [1_000, 100_000, 400_000] if FULL else [1_000, 100_000]


class Pool:
    """Values worth hitting: real session ids (so calls get past the lookup), hostile URIs."""

    session_ids: list[str] = []
    uris: list[str] = []


def pick(values: list[str], i: int) -> str:
    return values[i % len(values)]


def strings() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=40),
        st.sampled_from(["", " ", "\n", "\0", "\ud800", "caf\udce9", "../../etc/passwd", "*"]),
        st.builds(lambda n: "x" * n, st.sampled_from(HUGE)),
        # Looked up when drawn: the pool changes as the test goes.
        st.integers(0, 99).map(lambda i: pick(Pool.session_ids or ["ses_none"], i)),
        st.integers(0, 99).map(lambda i: pick(Pool.uris or ["file:///dev/zero"], i)),
    )


def any_json(max_leaves: int = 10) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), strings()
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=max_leaves,
    )


OMIT = object()  # send the message without "params" at all (JSON-RPC allows it)


def deep(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"d": value}
    return value


def from_schema(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A strategy for values valid under this (pydantic-made) JSON Schema."""
    if "$ref" in schema:
        return st.deferred(lambda: from_schema(defs[schema["$ref"].split("/")[-1]], defs))
    if "anyOf" in schema or "oneOf" in schema:
        return st.one_of([from_schema(s, defs) for s in schema.get("anyOf", schema.get("oneOf"))])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        if not properties:
            return st.dictionaries(st.text(max_size=8), any_json(4), max_size=3)
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v, defs) for k, v in properties.items() if k in required},
            optional={k: from_schema(v, defs) for k, v in properties.items() if k not in required},
        )
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), defs), max_size=3)
    if kind == "string":
        return strings().filter(lambda s: len(s) >= schema.get("minLength", 0))
    if kind == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -(2**40)))
        return st.integers(min_value=low, max_value=schema.get("maximum", 2**40))
    if kind == "number":
        return st.floats(min_value=0.001, max_value=1e6)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return any_json(4)


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """Valid params, or a mutation of them."""
    params = draw(valid)
    how = draw(
        st.sampled_from(
            ["valid", "valid", "drop", "wrong type", "unknown field", "huge", "deep", "not object"]
        )
    )
    if how == "not object":
        return draw(
            st.one_of(
                st.none(), st.integers(), st.text(max_size=5), st.lists(any_json(3)), st.just(OMIT)
            )
        )
    if not isinstance(params, dict) or how == "valid":
        return params
    params = dict(params)
    keys = sorted(params)
    if how == "drop" and keys:
        params.pop(draw(st.sampled_from(keys)))
    elif how == "wrong type" and keys:
        params[draw(st.sampled_from(keys))] = draw(any_json())
    elif how == "unknown field":
        params[draw(st.text(min_size=1, max_size=10))] = draw(any_json(3))
    elif how == "huge":
        key = draw(st.sampled_from(keys)) if keys else "huge"
        params[key] = "é" * draw(st.sampled_from(HUGE))
    elif how == "deep":
        # Deeper than this cannot be written by json.dumps; see test_deep_nesting_beyond_json.
        key = draw(st.sampled_from(keys)) if keys else "deep"
        params[key] = deep(draw(st.sampled_from([30, 300, 900])))
    return params


def schema_strategy(model: type[Any]) -> st.SearchStrategy[Any]:
    schema = model.model_json_schema(by_alias=True)
    return mutated(from_schema(schema, schema.get("$defs", {})))


# method -> how its params are sent
TARGETS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    **{m: ("request", schema_strategy(p)) for m, (p, _) in REQUESTS.items()},
    **{m: ("command", schema_strategy(p)) for m, (p, _) in COMMANDS.items()},
    **{m: ("notification", schema_strategy(p)) for m, p in CLIENT_NOTIFICATIONS.items()},
    "workspace/didChangeConfiguration": ("settings", schema_strategy(Settings)),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    # Sessions a fuzzed configuration gives a real model name talk to this, never the network.
    with MessagesAPIServer(default=reply(text("ok"))) as api:
        yield from _server(tmp_path_factory, api)


def _server(tmp_path_factory: pytest.TempPathFactory, api: MessagesAPIServer) -> Iterator[Serve]:
    root = tmp_path_factory.mktemp("fuzz")
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("print('a')\n")
    os.mkfifo(workspace / "fifo")
    Pool.uris = [
        (workspace / "a.py").as_uri(),
        (workspace / "fifo").as_uri(),
        (workspace / "missing.py").as_uri(),
        "file:///dev/zero",
        "file:///dev/stdin",
        "file:///proc/self/environ",
        "file:///etc/shadow",
        "untitled:Untitled-1",
        "not a uri",
        "file://",
    ]
    # The scripted model: prompts that get through run a real (offline) turn.
    serve = Serve(workspace, serve_env(root / "data", api.url), stderr=root / "serve.log")
    serve.initialize({"model": "scripted:echo"})
    Pool.session_ids = [serve.call("agent/newSession", {})["sessionId"] for _ in range(2)]
    yield serve
    serve.stop()


COUNTS: dict[str, int] = {}


def send_case(server: Serve, method: str, how: str, params: Any) -> None:
    COUNTS[method] = COUNTS.get(method, 0) + 1
    if COUNTS[method] % 20 == 0:
        # Fresh sessions now and then: the prompts that get through (echoed back, megabytes at
        # times) would otherwise pile up in two sessions and make every later step slower.
        Pool.session_ids = [server.call("agent/newSession", {})["sessionId"] for _ in range(2)]
    if params is OMIT:
        msg_id = server.new_id()
        if how in ("request", "command"):
            name = method if how == "request" else "workspace/executeCommand"
            server.send({"id": msg_id, "method": name})
            check_answer(server.answer(msg_id, timeout=30))
        else:
            server.send({"method": method})
    elif how == "request":
        answer = server.request(method, params, timeout=30)
        check_answer(answer)
    elif how == "command":
        arguments = [params] if COUNTS[method] % 5 else params  # now and then not a list
        answer = server.request(
            "workspace/executeCommand", {"command": method, "arguments": arguments}, timeout=30
        )
        check_answer(answer)
    elif how == "notification":
        server.notify(method, params)
    else:
        server.notify(method, {"settings": {"agent": params}})
    # Still serving: answers the next request, and the process is alive.
    pong = server.request("agent/listSessions", {}, timeout=30)
    assert "result" in pong, pong
    assert server.alive()


def check_answer(answer: dict[str, Any]) -> None:
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        assert answer["error"]["code"] in JSON_RPC_CODES, answer


@pytest.mark.timeout(900 if FULL else 120)
@pytest.mark.parametrize("method", list(TARGETS))
def test_fuzz_method(server: Serve, method: str, figures: Figures) -> None:
    how, strategy = TARGETS[method]
    before = COUNTS.get(method, 0)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=not FULL,
        suppress_health_check=list(HealthCheck),
    )
    @given(params=strategy)
    def run(params: Any) -> None:
        send_case(server, method, how, params)

    try:
        run()
    finally:
        sent = COUNTS.get(method, 0) - before
        figures.add(
            "Protocol fuzzing (hypothesis, from the pydantic models, with mutations): "
            "answered with a result or a JSON-RPC error, server still up",
            sent,
            sent if server.alive() else 0,
        )
    # Reset the configuration the settings cases may have broken, for the next methods.
    server.notify(
        "workspace/didChangeConfiguration", {"settings": {"agent": {"model": "scripted:echo"}}}
    )


def test_fuzz_left_the_server_healthy(server: Serve, figures: Figures) -> None:
    """After everything: a prompt in a fresh session still completes."""
    session = server.call("agent/newSession", {})["sessionId"]
    result = server.call("agent/prompt", {"sessionId": session, "text": "still there?"}, 60)
    assert result["finishReason"] == "end_turn" and "still there?" in result["text"]


def test_deep_nesting_beyond_json(server: Serve, figures: Figures) -> None:
    """Params nested 100,000 deep (more than any JSON parser here recurses): each request still
    gets its own error answer, and the server goes on."""
    depth = 100_000
    sent = 0
    for method in [*REQUESTS, "workspace/executeCommand"]:
        msg_id = server.new_id()
        body = (
            b'{"jsonrpc": "2.0", "id": %d, "method": "%s", "params": {"sessionId": "x", "deep": '
            % (msg_id, method.encode())
        )
        server.send_bytes(body + b"[" * depth + b"]" * depth + b"}}")
        answer = server.answer(msg_id, timeout=30)
        assert answer["error"]["code"] == -32700, answer
        assert "result" in server.request("agent/listSessions", {})
        sent += 1
    figures.add(
        "Protocol: params nested 100,000 deep (beyond the JSON parser's recursion)", sent, sent
    )


# (raw message, the id its error answer must carry; None when it is not a request one can answer)
ENVELOPES: list[tuple[bytes, Any]] = [
    (b"[1, 2]", None),
    (b'"a string"', None),
    (b"null", None),
    (b"{this is not json", None),
    (b'{"jsonrpc": "2.0", "id": 1}', None),  # a response to nothing
    (b'{"jsonrpc": "2.0", "id": [1], "method": "agent/listSessions"}', None),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "agent/listSessions"}', None),
    (b'{"jsonrpc": "2.0", "id": 7, "method": 12}', 7),
    (b'{"jsonrpc": "1.0", "id": 9, "method": "agent/listSessions"}', 9),
    (b'{"id": 10, "method": "agent/listSessions"}', 10),
    (b'{"jsonrpc": "2.0", "id": 12, "method": "agent/nope"}', 12),
    (b'{"jsonrpc": "2.0", "id": "s15", "method": "agent/newSession"}', "s15"),  # no params: fine
    (b'{"jsonrpc": "2.0", "id": 151, "method": "agent/listSessions"}', 151),
    (b'{"jsonrpc": "2.0", "id": 16.5, "method": "agent/listSessions"}', 16.5),
    (b'{"jsonrpc": "2.0", "id": 20, "method": "textDocument/codeAction", "params": {}}', 20),
    (
        b'{"jsonrpc": "2.0", "id": 21, "method": "agent/newSession", "params": {"title": "\\ud800"}}',
        21,
    ),
    (b'{"jsonrpc": "2.0", "id": 22, "method": "agent/listSessions", "params": {"x": 1}', 22),
    (b'\xff\xfe{"jsonrpc": "2.0", "id": 23, "method": "agent/listSessions"}', 23),
]


def test_broken_envelopes_are_answered(server: Serve, figures: Figures) -> None:
    """Messages that are not JSON-RPC 2.0 requests, or not JSON: a request among them gets an
    answer, nothing breaks the server."""
    survived = 0
    for raw, msg_id in ENVELOPES:
        server.send_bytes(raw)
        if msg_id is not None:
            answer = server.answer(msg_id, timeout=10)
            check_answer(answer)
            if msg_id in ("s15", 151, 16.5):  # valid requests: JSON-RPC lets params be left out
                assert "result" in answer, answer
        assert "result" in server.request("agent/listSessions", {})
        survived += 1
    figures.add(
        "Protocol: broken envelopes (not JSON, batches, bad ids, no params, no jsonrpc)",
        len(ENVELOPES),
        survived,
    )


def test_context_uris_that_never_end(server: Serve, figures: Figures, tmp_path: Path) -> None:
    """An editor's context reference to a device, a FIFO or a 200 MB file: the prompt is answered
    and the server never reads them whole."""
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.write(b"text\n")
        f.truncate(200 * 1024 * 1024)
    session = server.call("agent/newSession", {})["sessionId"]
    uris = [u for u in Pool.uris if "dev" in u or "fifo" in u] + [big.as_uri()]
    survived = 0
    base = server.reset_peak_rss()
    for uri in uris:
        result = server.call(
            "agent/prompt",
            {"sessionId": session, "text": "look", "context": [{"uri": uri}]},
            timeout=30,
        )
        assert result["finishReason"] == "end_turn"
        survived += 1
    grew = server.peak_rss_kb() - base
    figures.add(
        "Protocol: context URIs of /dev/zero, /dev/stdin, a FIFO, a 200 MB file",
        len(uris),
        survived if grew < 50 * 1024 else 0,
        note=f"server peak RSS grew {grew // 1024} MB",
    )
    assert grew < 50 * 1024, f"the server's peak RSS grew by {grew // 1024} MB"
