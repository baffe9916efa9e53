"""The test MCP server (tests/mcp/server.py) as agentls configures it: over stdio, or over
streamable HTTP on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SERVER = str(Path(__file__).with_name("server.py"))


def stdio_entry(**env: str) -> dict[str, Any]:
    """An mcpServers entry that runs the test server over stdio."""
    return {"command": sys.executable, "args": [SERVER], "env": env}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


@dataclass
class HttpServer:
    url: str
    proc: subprocess.Popen[bytes]


@pytest.fixture
def http_process() -> Iterator[HttpServer]:
    """The test server over streamable HTTP on 127.0.0.1 (its url and process)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the test MCP server did not start") from None
                time.sleep(0.05)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", proc)
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(10)


@pytest.fixture
def http_server(http_process: HttpServer) -> str:
    """The test server's url over streamable HTTP on 127.0.0.1."""
    return http_process.url
