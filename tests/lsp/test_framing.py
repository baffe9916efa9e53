"""Transport robustness: a broken frame is logged and the server keeps serving."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.lsp.conftest import server_env
from tests.support.messages_api import MessagesAPIServer


def test_broken_frames_are_logged_and_the_server_keeps_serving(
    tmp_path: Path, module_api: MessagesAPIServer
) -> None:
    env = server_env(module_api, tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls.cli.main", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )

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
