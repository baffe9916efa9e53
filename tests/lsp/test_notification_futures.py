"""A long editor session does not keep a future for each notification the editor sent: pygls 2.1
files the future of every notification handled by a coroutine, a generator or a thread under an
id nobody answers, and never drops it (found by bench/long_session.py: about 1 KB a step)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentls.lsp.server import build_server


class Discard:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def test_handled_notifications_leave_no_future(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    server = build_server()
    server.protocol.set_writer(Discard())
    uri = (tmp_path / "a.py").as_uri()
    (tmp_path / "a.py").write_text("x = 0\n")

    def send(method: str, params: Any, msg_id: int | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if msg_id is not None:
            message["id"] = msg_id
        body = json.dumps(message)
        server.protocol.handle_message(
            json.loads(body, object_hook=server.protocol.structure_message)
        )

    async def session() -> int:
        send("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, 1)
        send("initialized", {})
        await asyncio.sleep(0.2)
        item = {"uri": uri, "languageId": "python", "version": 1, "text": "x = 0\n"}
        send("textDocument/didOpen", {"textDocument": item})
        for version in range(2, 52):
            change = {"text": f"x = {version}\n"}
            doc = {"uri": uri, "version": version}
            send("textDocument/didChange", {"textDocument": doc, "contentChanges": [change]})
            send("textDocument/didSave", {"textDocument": {"uri": uri}})
            diagnostics = {"uri": uri, "version": version, "diagnostics": []}
            send("agent/diagnostics", diagnostics)
            await asyncio.sleep(0)
        await asyncio.sleep(0.2)
        return len(server.protocol._request_futures)

    assert asyncio.run(session()) == 0
