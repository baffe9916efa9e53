"""Transport faults: broken frames, and a client that goes away mid-turn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from messages_api import MessagesAPIServer
from tests.lsp.conftest import server_env


def test_broken_frames_are_logged_and_the_server_keeps_serving(
    tmp_path: Path, module_api: MessagesAPIServer
) -> None:
    env = server_env(module_api, tmp_path)
    proc = spawn_serve(env, tmp_path, subprocess.PIPE)

    def frame(body: bytes) -> bytes:
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": os.getpid(), "rootUri": None, "capabilities": {}},
    }
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(frame(b"{this is not json"))
        proc.stdin.write(frame(json.dumps(initialize).encode()))
        proc.stdin.flush()
        others = []
        while True:
            header = proc.stdout.readline()
            assert header.startswith(b"Content-Length:"), header
            length = int(header.split(b":")[1])
            while proc.stdout.readline() not in (b"\r\n", b"\n"):
                pass
            answer = json.loads(proc.stdout.read(length))
            if answer.get("id") == 1:
                break
            others.append(answer)
        # The broken frame was reported to the client, and initialize still answered.
        assert any(o.get("method") == "window/showMessage" for o in others), others
        assert (
            answer["id"] == 1
            and answer["result"]["capabilities"]["experimental"]["agent"]["protocolVersion"] == 1
        )
    finally:
        proc.kill()
        _, stderr = proc.communicate(timeout=10)
    assert proc.returncode is not None
    assert b"Traceback" in stderr or b"error" in stderr.lower()


def spawn_serve(env: dict[str, str], cwd: Path, stderr: int) -> subprocess.Popen[bytes]:
    """`agentls serve` on pipes (stderr: subprocess.PIPE or DEVNULL)."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentls.cli.main", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=env,
        cwd=cwd,
    )


class RawClient:
    """JSON-RPC over the server's pipes, by hand: for what a well-behaved client never does."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.seen: list[dict[str, object]] = []

    def send(self, message: dict[str, object]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def read(self) -> dict[str, object]:
        assert self.proc.stdout is not None
        header = self.proc.stdout.readline()
        assert header.startswith(b"Content-Length:"), header
        length = int(header.split(b":")[1])
        while self.proc.stdout.readline() not in (b"\r\n", b"\n"):
            pass
        message: dict[str, object] = json.loads(self.proc.stdout.read(length))
        self.seen.append(message)
        return message

    def until(self, predicate: Callable[[dict[str, object]], bool]) -> dict[str, object]:
        while True:
            message = self.read()
            if predicate(message):
                return message

    def initialize(self, workspace: Path) -> None:
        """initialize (id 1, the model from initializationOptions), then initialized."""
        self.send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": workspace.as_uri(),
                    "capabilities": {},
                    "initializationOptions": {"agent": {"model": "claude-sonnet-5-5"}},
                },
            }
        )
        self.until(lambda m: m.get("id") == 1)
        self.send({"method": "initialized", "params": {}})


def test_client_disconnect_mid_turn_cancels_and_persists(
    tmp_path: Path, module_api: MessagesAPIServer
) -> None:
    import asyncio
    import threading

    from agentls.store import Store
    from messages_api import reply, text

    hold = threading.Event()
    module_api.enqueue(
        reply(text("streamed before the client went away"), chunk_size=4, hold=hold, hold_after=6)
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    proc = spawn_serve(server_env(module_api, tmp_path), workspace, subprocess.DEVNULL)
    client = RawClient(proc)
    try:
        client.initialize(workspace)
        client.send({"id": 2, "method": "agent/newSession", "params": {}})
        session_id = client.until(lambda m: m.get("id") == 2)["result"]["sessionId"]  # type: ignore[index]
        client.send(
            {"id": 3, "method": "agent/prompt", "params": {"sessionId": session_id, "text": "talk"}}
        )
        client.until(
            lambda m: m.get("method") == "agent/event" and m["params"]["type"] == "text-delta"
        )  # type: ignore[index]
        assert proc.stdin is not None
        proc.stdin.close()  # the editor is gone
        assert proc.wait(timeout=20) is not None
    finally:
        hold.set()
        if proc.poll() is None:
            proc.kill()

    async def load() -> list[object]:
        store = await Store.open(tmp_path / "agentls.db")
        try:
            return list(await store.load_messages(session_id))  # type: ignore[arg-type]
        finally:
            await store.close()

    messages = asyncio.run(load())
    assert [m.role for m in messages] == ["user", "assistant"]  # type: ignore[attr-defined]
    assistant = messages[1]
    assert assistant.finish_reason == "cancelled"  # type: ignore[attr-defined]
    assert assistant.parts[0].cancelled and assistant.parts[0].text  # type: ignore[attr-defined]


def test_errors_answered_to_the_client_are_one_line_not_a_traceback(
    tmp_path: Path, module_api: MessagesAPIServer
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {**server_env(module_api, tmp_path), "AGENTLS_LOG": "INFO"}
    proc = spawn_serve(env, workspace, subprocess.PIPE)
    client = RawClient(proc)
    try:
        client.initialize(workspace)
        client.send({"id": 2, "method": "agent/prompt", "params": {"text": "no session id"}})
        answer = client.until(lambda m: m.get("id") == 2)
        client.send({"id": 3, "method": "shutdown"})
        client.until(lambda m: m.get("id") == 3)
        client.send({"method": "exit"})
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    error = answer["error"]
    assert isinstance(error, dict) and error["code"] == -32602 and "sessionId" in error["message"]
    log = stderr.decode(errors="replace")
    assert "Traceback" not in log, log
    assert "answered with error -32602" in log and "sessionId" in log
