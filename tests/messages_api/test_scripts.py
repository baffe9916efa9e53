"""Replies as JSON and script files, and the server in its own process (python -m messages_api)
with its /_test endpoints."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anthropic
import pytest

from messages_api import (
    ErrorReply,
    Reply,
    ReplySpec,
    connection_reset,
    error,
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
from tests.messages_api.conftest import MODEL, USER, sclient

REPO = Path(__file__).resolve().parents[2]


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
