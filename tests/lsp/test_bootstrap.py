"""`agentls serve` answers `initialize` before it imports pygls (agentls/lsp/bootstrap.py): the
answer must be byte for byte the one our pygls server gives for the same message, and everything
else must go on exactly as if pygls had read the input from the start."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.protocol import default_converter

from agentls.lsp import bootstrap, bootstrap_gen
from agentls.lsp.bootstrap_data import DATA
from agentls.lsp.server import WriteCapture, _PrefixedReader, build_server
from tests.lsp.editor import Profile

CLIENTS = Path(__import__("pytest_lsp").__file__).parent / "clients"
HEAVY = ("pygls", "lsprotocol", "pydantic", "attrs", "cattrs", "anthropic", "agentls.config")


@pytest.fixture(autouse=True)
def _no_workspace_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def frame(message: Any) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(params: Any, msg_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


def pygls_answer(body: bytes) -> bytes:
    """What a fresh server writes back for this first message, processed as pygls.io_.run_async
    processes one (errors included)."""
    server = build_server()
    capture = WriteCapture()
    server.protocol.set_writer(capture)

    async def handle() -> None:
        try:
            message = json.loads(body, object_hook=server.protocol.structure_message)
            server.protocol.handle_message(message)
        except Exception:
            pass

    asyncio.run(handle())
    return capture.data


def early(message: Any) -> bytes | None:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    answer = bootstrap.early_answer(body)
    return None if answer is None else answer.frame


def real_clients() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(CLIENTS.glob("*.json")):
        yield path.stem, json.loads(path.read_text())
    converter = default_converter()  # type: ignore[no-untyped-call]
    for name, profile in (
        ("vscode-extension", Profile()),
        ("plain", Profile(document_changes=False, resource_operations=(), approvals=False)),
    ):
        yield name, {"capabilities": converter.unstructure(profile.capabilities())}


# ---- the answer ---------------------------------------------------------------------------


def test_generated_data_is_current() -> None:
    assert bootstrap_gen.main(["--check"]) == 0, "run `make schemas`"


@pytest.mark.parametrize("name,client", list(real_clients()), ids=lambda v: str(v)[:30])
def test_real_clients_are_answered_early_exactly_as_pygls_answers(
    name: str, client: dict[str, Any], tmp_path: Path
) -> None:
    for params in (
        {**client, "processId": 4242, "rootUri": tmp_path.as_uri()},
        {
            **client,
            "processId": None,
            "rootPath": str(tmp_path),
            "rootUri": None,
            "workspaceFolders": [{"uri": (tmp_path / "my project").as_uri(), "name": "p"}],
            "initializationOptions": {"agent": {"model": "scripted:echo"}},
            "trace": "off",
            "locale": "fr",
        },
    ):
        message = initialize(params)
        answer = early(message)
        assert answer is not None, f"{name}: not answered early"
        assert answer == pygls_answer(json.dumps(message).encode())


SYNC_VALUES: list[Any] = ["absent", None, False, True]


@pytest.mark.parametrize("will_save", SYNC_VALUES)
@pytest.mark.parametrize("wait_until", SYNC_VALUES)
@pytest.mark.parametrize(
    "encodings",
    ["absent", None, [], ["utf-8"], ["utf-32", "utf-8"], ["latin-1", "utf-32"], ["latin-1"]],
)
def test_what_pygls_takes_from_the_client_capabilities(
    will_save: Any, wait_until: Any, encodings: Any
) -> None:
    sync = {
        key: value
        for key, value in (("willSave", will_save), ("willSaveWaitUntil", wait_until))
        if value != "absent"
    }
    capabilities: dict[str, Any] = {"textDocument": {"synchronization": sync}}
    if encodings != "absent":
        capabilities["general"] = {"positionEncodings": encodings}
    message = initialize({"capabilities": capabilities})
    answer = early(message)
    assert answer is not None
    assert answer == pygls_answer(json.dumps(message).encode())


@pytest.mark.parametrize("msg_id", [0, 7, 2**53, -3, "init", "é\u2028", ""])
def test_any_request_id(msg_id: Any) -> None:
    message = initialize({"capabilities": {}}, msg_id)
    answer = early(message)
    assert answer is not None and answer == pygls_answer(json.dumps(message).encode())


@pytest.mark.parametrize(
    "options",
    [
        None,
        5,
        {"agent": {"maxSteps": 0}},
        {"agent": "fast"},
        {"agent": {"permissions": "nonsense", "thinking": 3}},
    ],
)
def test_settings_never_change_the_answer(options: Any) -> None:
    """Bad settings are reported after initialize (the agent then refuses to work), so the answer
    is the same whatever they are."""
    message = initialize({"capabilities": {}, "initializationOptions": options})
    expected = pygls_answer(json.dumps(message).encode())
    assert b'"result"' in expected
    assert early(message) == expected


LEFT_TO_PYGLS: list[Any] = [
    b"{this is not json",
    b"[1, 2]",
    b"null",
    b"\xff\xfe{}",
    {"jsonrpc": "2.0", "id": 1, "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "method": "initialize", "params": {"capabilities": {}}},
    {"jsonrpc": "1.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
    {"id": 1, "method": "initialize", "params": {"capabilities": {}}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
    {"jsonrpc": "2.0", "id": 1.5, "method": "initialize", "params": {"capabilities": {}}},
    {"jsonrpc": "2.0", "id": True, "method": "initialize", "params": {"capabilities": {}}},
    {"jsonrpc": "2.0", "id": [1], "method": "initialize", "params": {"capabilities": {}}},
    {**initialize({"capabilities": {}}), "result": None},
    initialize([]),
    initialize({}),
    initialize({"capabilities": 5}),
    initialize({"capabilities": {"general": {"positionEncodings": "utf-8"}}}),
    initialize({"capabilities": {"general": {"positionEncodings": [8]}}}),
    initialize({"capabilities": {"textDocument": {"synchronization": {"willSave": "yes"}}}}),
    initialize({"capabilities": {"textDocument": {"hover": {"contentFormat": ["html"]}}}}),
    initialize({"capabilities": {"textDocument": {"callHierarchy": ["dynamicRegistration"]}}}),
    initialize({"capabilities": {"workspace": {"workspaceFolders": []}}}),
    initialize({"capabilities": {}, "workspaceFolders": [[]]}),
    initialize({"capabilities": {}, "processId": "42"}),
    initialize({"capabilities": {}, "trace": "loud"}),
    initialize({"capabilities": {}, "workspaceFolders": [{"uri": "file:///a"}]}),
    initialize({"capabilities": {"experimental": {"agent": {"approvals": "yes"}}}}),
    initialize({"capabilities": {"experimental": {"agent": {"saves_edits": 1}}}}),
    initialize({"capabilities": {}, "rootUri": "file:///a%00b"}),
    initialize({"capabilities": {}, "rootUri": "file://[::1/x"}),
    initialize({"capabilities": {}, "rootUri": "file:///caf\udce9"}),
    initialize({"capabilities": {}, "rootPath": "//server"}),
    initialize({"capabilities": {}, "rootPath": "/a\0b"}),
    initialize({"capabilities": {}, "rootPath": "/\ud800"}),
    initialize({"capabilities": {}, "initializationOptions": {"x": {"jsonrpc": "2.0"}}}),
    initialize({"capabilities": {}, "jsonrpc": "2.0"}),
    initialize({"capabilities": {}, "initializationOptions": json.loads("[" * 300 + "]" * 300)}),
]


@pytest.mark.parametrize("message", LEFT_TO_PYGLS, ids=lambda m: repr(m)[:60])
def test_anything_else_is_left_to_pygls(message: Any) -> None:
    assert early(message) is None


# Every known shape, and mutations of it: whatever the bootstrap answers, pygls answers the same.


def any_json() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**40), 2**40),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
        st.sampled_from(["utf-8", "utf-16", "file:///x", "markdown", "create", "jsonrpc"]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(["jsonrpc", "a", "agent"]), inner, max_size=2),
        ),
        max_leaves=6,
    )


_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {}


def of_kind(kind: Any) -> st.SearchStrategy[Any]:
    """Values of a type description of bootstrap_data (integers a little beyond their range)."""
    key = json.dumps(kind)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = _of_kind(kind)
    return _STRATEGIES[key]


def _of_kind(kind: Any) -> st.SearchStrategy[Any]:
    if isinstance(kind, str):
        simple: dict[str, st.SearchStrategy[Any]] = {
            "any": any_json(),
            "null": st.none(),
            "bool": st.booleans(),
            "str": st.one_of(st.text(max_size=10), st.sampled_from(["file:///w", "utf-8", ""])),
            "float": st.floats(allow_nan=False, allow_infinity=False),
        }
        return simple.get(kind, any_json())
    tag = kind[0]
    if tag == "int":
        low = -(2**40) if kind[1] is None else kind[1] - 2
        high = 2**40 if kind[2] is None else kind[2] + 2
        return st.integers(low, high)
    if tag == "enum":
        return st.sampled_from(kind[1])
    if tag == "list":
        return st.lists(of_kind(kind[1]), max_size=3)
    if tag == "union":
        return st.one_of([of_kind(option) for option in kind[1]])
    described = DATA["classes"][kind[1]]
    fields = described["fields"]
    required = described["required"]
    optional = [k for k in fields if k not in required]

    @st.composite
    def objects(draw: st.DrawFn) -> dict[str, Any]:
        # A few of the optional members at a time: examples stay small, and quick to make.
        chosen = (
            draw(st.lists(st.sampled_from(optional), max_size=4, unique=True)) if optional else []
        )
        return {k: draw(of_kind(fields[k])) for k in [*required, *chosen]}

    # lsprotocol takes an array for an object with no required members (Neovim 0.9 sends one).
    arrays = st.lists(st.one_of(any_json(), st.sampled_from(sorted(fields) or [""])), max_size=2)
    return st.one_of(objects(), arrays) if not required else objects()


@st.composite
def mutated_params(draw: st.DrawFn) -> Any:
    params = draw(of_kind(["class", "InitializeParams"]))
    for _ in range(draw(st.integers(0, 3))):
        # A random place in the params (params itself included): replace it, drop it, or add a
        # member to it.
        path: list[Any] = []
        node = params
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(
                st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node)))
            )
            path.append(key)
            node = node[key]
        how = draw(st.sampled_from(["replace", "drop", "add"]))
        if how == "add" and isinstance(node, dict):
            name = draw(st.sampled_from(["jsonrpc", "id", "method", "x", *sorted(node)]))
            node[name] = draw(any_json())
            continue
        if not path:
            continue
        parent = params
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and how == "drop":
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(any_json())
    return params


@settings(
    # AGENTLS_BOOTSTRAP_EXAMPLES=5000 for a longer, random search.
    max_examples=int(os.environ.get("AGENTLS_BOOTSTRAP_EXAMPLES", "200")),
    deadline=None,
    database=None,
    derandomize="AGENTLS_BOOTSTRAP_EXAMPLES" not in os.environ,
    suppress_health_check=list(HealthCheck),
)
@given(params=mutated_params())
def test_whatever_is_answered_early_is_what_pygls_answers(params: Any) -> None:
    message = initialize(params)
    answer = early(message)
    if answer is not None:
        assert answer == pygls_answer(json.dumps(message).encode())
        converter = default_converter()  # type: ignore[no-untyped-call]
        converter.structure(params, types.InitializeParams)


# ---- the reader the server proper starts with ---------------------------------------------


class Chunks:
    """An async reader over bytes, reading as StdinAsyncReader reads a BufferedReader."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    async def readline(self) -> bytes:
        end = self.data.find(b"\n") + 1 or len(self.data)
        line, self.data = self.data[:end], self.data[end:]
        return line

    async def readexactly(self, n: int) -> bytes:
        part, self.data = self.data[:n], self.data[n:]
        return part


@pytest.mark.parametrize("split", [0, 1, 5, 21, 22, 30, 40, 47, 60])
def test_the_prefix_and_stdin_read_as_one_stream(split: int) -> None:
    stream = frame(b'{"a": "x\\ny"}') + b"Content-Length: 3\r\n\r\n[1]" + b"tail without newline"
    drained: list[bool] = []
    reader = _PrefixedReader(stream[:split], Chunks(stream[split:]), lambda: drained.append(True))
    whole = Chunks(stream)

    async def read_all(r: Any) -> list[bytes]:
        out = [await r.readline(), await r.readline(), await r.readexactly(13)]
        out += [await r.readline(), await r.readline(), await r.readexactly(3)]
        out += [await r.readline(), await r.readline(), await r.readexactly(4)]
        return out

    assert asyncio.run(read_all(reader)) == asyncio.run(read_all(whole))
    assert drained == [True]


def test_the_first_message_is_read_as_pygls_reads_one() -> None:
    import io

    body = json.dumps(initialize({"capabilities": {}})).encode()
    rest = frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    stream = (
        b"\r\nContent-Type: x\r\nContent-Length: 0\r\n\r\n"  # no length yet: pygls reads on
        + b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n" % len(body)
        + body
        + rest
    )
    stdin = io.BufferedReader(io.BytesIO(stream))  # type: ignore[arg-type]
    consumed, got = bootstrap.read_first_message(stdin)
    assert got == body and consumed == stream[: len(stream) - len(rest)]
    assert stdin.read() == rest
    for cut in (b"", b"Content-Length: 5\r\n", b"Content-Length: 5\r\n\r\n", b"Content-Le"):
        consumed, got = bootstrap.read_first_message(io.BufferedReader(io.BytesIO(cut)))  # type: ignore[arg-type]
        assert got is None and consumed == cut


# ---- `agentls serve` ----------------------------------------------------------------------


def test_nothing_heavy_is_imported_before_the_answer(tmp_path: Path) -> None:
    """The command's import chain up to the answer is the standard library alone."""
    code = (
        "import sys; from agentls.cli import main; from agentls.lsp import bootstrap; "
        "consumed, body = bootstrap.read_first_message(sys.stdin.buffer); "
        "assert bootstrap.early_answer(body) is not None; "
        f"print([m for m in sys.modules if m.startswith({HEAVY!r})])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=frame(initialize({"capabilities": {}})),
        capture_output=True,
        check=True,
        cwd=tmp_path,
    )
    assert out.stdout.strip() == b"[]", out


def spawn(tmp_path: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(AGENTLS_DATA_DIR=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    env.pop("AGENTLS_MODEL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "agentls.cli.main", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )


def read_frames(data: bytes) -> list[dict[str, Any]]:
    messages = []
    while data:
        head, _, data = data.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        messages.append(json.loads(data[:length]))
        data = data[length:]
    return messages


def converse(tmp_path: Path, *messages: Any, timeout: float = 60) -> tuple[list[Any], bytes, int]:
    """Everything written at once, before the server has read anything; all it writes back."""
    proc = spawn(tmp_path)
    out, err = proc.communicate(b"".join(frame(m) for m in messages), timeout=timeout)
    return read_frames(out), err, proc.returncode


def test_everything_sent_before_the_server_is_up_is_answered_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    uri = (tmp_path / "a.py").as_uri()
    init = initialize(
        {
            "processId": None,
            "rootUri": tmp_path.as_uri(),
            "capabilities": {"experimental": {"agent": {"approvals": True}}},
            "initializationOptions": {"agent": {"model": "scripted:echo"}},
        }
    )
    proc = spawn(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    opened = {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x\n"}}
    for message in (
        init,
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": opened},
        {"jsonrpc": "2.0", "id": 2, "method": "agent/newSession", "params": {}},
    ):
        proc.stdin.write(frame(message))
        proc.stdin.flush()
    answers = read_frames(_read_frame(proc.stdout))
    # Before the server proper is up (the answer to newSession needs it): asked at once.
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "agent/listSessions"}))
    proc.stdin.flush()
    while len(answers) < 3:
        answers += read_frames(_read_frame(proc.stdout))
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}))
    proc.stdin.flush()
    answers += read_frames(_read_frame(proc.stdout))
    out, err = proc.communicate(frame({"jsonrpc": "2.0", "method": "exit"}), timeout=30)
    answers += read_frames(out)
    code = proc.returncode
    ids = [a.get("id") for a in answers if "method" not in a]
    assert ids == [1, 2, 3, 4], answers  # initialize answered once, first; the rest in order
    assert answers[0] == json.loads(
        pygls_answer(json.dumps(init).encode()).partition(b"\r\n\r\n")[2]
    )
    session = answers[1]["result"]["sessionId"]
    assert [s["sessionId"] for s in answers[2]["result"]["sessions"]] == [session]
    assert code == 0
    assert b"early" not in err, err.decode()  # no mismatch was logged


def test_exit_or_end_of_input_before_the_server_is_up(tmp_path: Path) -> None:
    init = initialize({"capabilities": {}})
    answers, err, code = converse(tmp_path, init, {"jsonrpc": "2.0", "method": "exit"})
    assert [a["id"] for a in answers] == [1] and code == 1  # exit without shutdown
    answers, err, code = converse(tmp_path, init)
    assert [a["id"] for a in answers] == [1] and code == 0
    answers, err, code = converse(tmp_path)
    assert answers == [] and code == 0


@pytest.mark.parametrize(
    "first",
    [
        initialize({"capabilities": 5}),
        initialize({"capabilities": {"experimental": {"agent": {"approvals": "maybe"}}}}),
        initialize({"capabilities": {}}, msg_id=1.5),
        {"jsonrpc": "2.0", "id": 1, "method": "agent/listSessions", "params": {}},
    ],
    ids=["bad capabilities", "bad agent capabilities", "float id", "not initialize"],
)
def test_a_first_message_left_to_pygls_is_answered_as_it_always_was(
    tmp_path: Path, first: Any
) -> None:
    proc = spawn(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    answers: list[dict[str, Any]] = []
    for message in (first, {"jsonrpc": "2.0", "id": 9, "method": "shutdown"}):
        proc.stdin.write(frame(message))
        proc.stdin.flush()
        while not any(a.get("id") == message["id"] for a in answers):
            answers += read_frames(_read_frame(proc.stdout))
    proc.communicate(frame({"jsonrpc": "2.0", "method": "exit"}), timeout=30)
    if first["method"] == "initialize":
        expected = read_frames(pygls_answer(json.dumps(first).encode()))
        assert expected and answers[: len(expected)] == expected
    else:  # a request before initialize: served as it always was
        assert answers[0]["id"] == 1 and "result" in answers[0]
    assert answers[-1] == {"id": 9, "jsonrpc": "2.0", "result": None}
    assert proc.returncode == 0


def test_bad_settings_are_reported_and_the_agent_refuses_until_fixed(tmp_path: Path) -> None:
    (tmp_path / ".agentls").mkdir()
    (tmp_path / ".agentls" / "config.json").write_text('{"maxSteps": "many"}')
    # A trusted workspace: an untrusted one's maxSteps would be ignored (see agentls.trust).
    init = initialize(
        {
            "rootUri": tmp_path.as_uri(),
            "capabilities": {},
            "initializationOptions": {"agent": {"workspaceTrusted": True}},
        }
    )
    fixed = {"settings": {"agent": {"model": "scripted:echo"}}}
    config = tmp_path / ".agentls" / "config.json"
    proc = spawn(tmp_path)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(
            frame(init) + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        )
        proc.stdin.write(
            frame({"jsonrpc": "2.0", "id": 2, "method": "agent/newSession", "params": {}})
        )
        proc.stdin.flush()
        seen = []
        while not any(m.get("id") == 2 for m in seen):
            seen.extend(read_frames(_read_frame(proc.stdout)))
        assert "result" in seen[0] and seen[0]["id"] == 1
        shown = [m for m in seen if m.get("method") == "window/showMessage"]
        assert shown and "maxSteps" in shown[0]["params"]["message"]
        refused = next(m for m in seen if m.get("id") == 2)
        assert refused["error"]["code"] == -32803 and "maxSteps" in refused["error"]["message"]
        config.write_text("{}")
        proc.stdin.write(
            frame({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": fixed})
            + frame({"jsonrpc": "2.0", "id": 3, "method": "agent/newSession", "params": {}})
        )
        proc.stdin.flush()
        while not any(m.get("id") == 3 for m in seen):
            seen.extend(read_frames(_read_frame(proc.stdout)))
        assert "sessionId" in next(m for m in seen if m.get("id") == 3)["result"]
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def _read_frame(stdout: Any) -> bytes:
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        head += stdout.read(1)
    length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
    data: bytes = head + stdout.read(length)
    return data
