"""Broken frames on `agentls acp`'s stdin: each gets a JSON-RPC error (or, a broken notification,
nothing), and the server goes on serving."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from tests.acp.conftest import EXIT_S, START_S, AcpEnv


async def test_broken_frames_get_errors_and_the_server_goes_on(acp_env: AcpEnv) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls.cli.main",
        "acp",
        env={**acp_env.env, "PATH": "/usr/bin:/bin"},
        cwd=acp_env.root,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    frames: list[Any] = [
        "garbage",
        "[1, 2]",
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "initialize"},
        {"jsonrpc": "2.0", "id": 7, "method": 5},
        {"id": 8, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 9, "method": "session/prompt"},
        {"jsonrpc": "2.0", "id": 10, "method": "session/new", "params": [1]},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}},
        {"jsonrpc": "2.0", "method": 3},
        {"jsonrpc": "2.0", "id": 11, "method": "nope/nope", "params": {}},
        {"jsonrpc": "2.0", "id": 12, "method": "initialize", "params": {"protocolVersion": 1}},
    ]
    for frame in frames:
        line = frame if isinstance(frame, str) else json.dumps(frame)
        proc.stdin.write(line.encode() + b"\n")
    await proc.stdin.drain()

    answers: dict[Any, list[dict[str, Any]]] = {}
    expected = {None: 3, 7: 1, 8: 1, 9: 1, 10: 1, 11: 1, 12: 1}

    async def read() -> None:
        assert proc.stdout is not None
        while any(len(answers.get(k, [])) < n for k, n in expected.items()):
            message = json.loads(await proc.stdout.readline())
            answers.setdefault(message["id"], []).append(message)

    try:
        await asyncio.wait_for(read(), START_S)
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), EXIT_S)
    codes = {key: [m["error"]["code"] for m in got if "error" in m] for key, got in answers.items()}
    assert codes[None] == [-32700, -32600, -32600]
    assert codes[7] == [-32600] and codes[8] == [-32600]
    assert codes[9] == [-32602] and codes[10] == [-32602]
    assert codes[11] == [-32601]
    assert answers[12][0]["result"]["protocolVersion"] == 1
    # The errors name the fields: the params left out are an empty object, missing its fields.
    assert answers[9][0]["error"]["message"] == (
        "Invalid params: sessionId: Field required; prompt: Field required"
    )
    assert answers[10][0]["error"]["message"].startswith("Invalid params: params: ")
    # Nothing else was answered (the broken notifications get no answer), and it ended cleanly.
    assert set(answers) == set(expected)
    assert proc.returncode == 0
