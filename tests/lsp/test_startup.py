"""`agentls serve` starting up: whatever a client sends before the server is up is answered, in
order; `initialize` is answered whatever the settings (bad ones are reported after it, and the
agent refuses to work until they are fixed); the SDK is not imported before it is needed."""

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
from pygls.protocol import default_converter

from agentls.lsp.server import build_server
from agentls.trust import TrustStore, workspace_config
from tests.lsp.editor import Profile

HEAVY = ("anthropic",)


@pytest.fixture(autouse=True)
def _no_workspace_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def frame(message: Any) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def initialize(params: Any, msg_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


class WriteCapture:
    """A writer for pygls' protocol that keeps the bytes of the frames it is given."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


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


# ---- the answer ---------------------------------------------------------------------------


CLIENTS = Path(__import__("pytest_lsp").__file__).parent / "clients"


def real_clients() -> Iterator[tuple[str, dict[str, Any]]]:
    """The capabilities real editors send (pytest-lsp's collection), and our test profiles."""
    for path in sorted(CLIENTS.glob("*.json")):
        yield path.stem, json.loads(path.read_text())
    converter = default_converter()  # type: ignore[no-untyped-call]
    for name, profile in (
        ("vscode-extension", Profile()),
        ("plain", Profile(document_changes=False, resource_operations=(), approvals=False)),
    ):
        yield name, {"capabilities": converter.unstructure(profile.capabilities())}


@pytest.mark.parametrize("name,client", list(real_clients()), ids=lambda v: str(v)[:30])
def test_real_clients_are_answered(name: str, client: dict[str, Any], tmp_path: Path) -> None:
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
        answer = read_frames(pygls_answer(json.dumps(initialize(params)).encode()))
        assert [a["id"] for a in answer] == [1], f"{name}: {answer}"
        capabilities = answer[0]["result"]["capabilities"]
        assert capabilities["experimental"] == {"agent": {"protocolVersion": 1}}, name


@pytest.mark.parametrize("msg_id", [0, 7, 2**53, -3, "init", "é\u2028", ""])
def test_any_request_id(msg_id: Any) -> None:
    answer = read_frames(
        pygls_answer(json.dumps(initialize({"capabilities": {}}, msg_id)).encode())
    )
    assert [a["id"] for a in answer] == [msg_id] and "result" in answer[0]


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
    plain = pygls_answer(json.dumps(initialize({"capabilities": {}})).encode())
    message = initialize({"capabilities": {}, "initializationOptions": options})
    expected = pygls_answer(json.dumps(message).encode())
    assert b'"result"' in expected
    assert expected == plain


# ---- `agentls serve` ----------------------------------------------------------------------


def test_the_sdk_is_not_imported_to_answer_initialize(tmp_path: Path) -> None:
    """The server answers initialize without the SDK (imported in the background afterwards)."""
    code = (
        "import sys, json; from agentls.lsp.server import build_server; "
        "build_server(); "
        f"print(json.dumps([m for m in sys.modules if m.startswith({HEAVY!r})]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, cwd=tmp_path
    )
    assert json.loads(out.stdout) == [], out


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
    # While newSession is still being served (it opens the store): asked at once.
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
    assert ids == [1, 2, 3, 4], answers  # initialize answered first; the rest in order
    assert answers[0] == json.loads(
        pygls_answer(json.dumps(init).encode()).partition(b"\r\n\r\n")[2]
    )
    session = answers[1]["result"]["sessionId"]
    assert [s["sessionId"] for s in answers[2]["result"]["sessions"]] == [session]
    assert code == 0, err.decode()


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
def test_an_odd_first_message_is_answered_as_pygls_answers_it(tmp_path: Path, first: Any) -> None:
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
    # ... and the user confirmed its content (agentls.trust): only then does it count at all.
    store = TrustStore(tmp_path / "cfg" / "agentls" / "trusted-workspaces.json")
    store.trust(workspace_config(tmp_path), config.read_bytes())
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
