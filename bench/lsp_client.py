"""A minimal LSP client over a child's stdin/stdout (JSON-RPC with Content-Length frames) that
stamps each message with its arrival time. Requests from the server are answered with null, or by
handle_request() in a subclass."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Notification:
    at: float  # time.time() when the whole frame had been read
    method: str
    params: Any


class LspClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.notifications: list[Notification] = []
        self.on_notification: Callable[[Notification], None] | None = None
        self._reader = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def spawn(
        cls,
        cmd: Sequence[str],
        env: dict[str, str],
        cwd: str,
        limit: int = 64 * 1024 * 1024,
        stderr_path: Path | None = None,
    ) -> LspClient:
        stderr: Any = asyncio.subprocess.DEVNULL
        if stderr_path is not None:
            stderr = open(stderr_path, "wb")  # noqa: ASYNC230, SIM115 - the child keeps it
        try:
            proc = await asyncio.create_subprocess_exec(
                *cmd,
                env=env,
                cwd=cwd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
                limit=limit,
            )
        finally:
            if stderr_path is not None:
                stderr.close()
        return cls(proc)

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    def send_request(self, method: str, params: Any) -> asyncio.Future[Any]:
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._write({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return future

    async def request(self, method: str, params: Any, timeout: float = 120) -> Any:  # noqa: ASYNC109
        return await asyncio.wait_for(self.send_request(method, params), timeout)

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def _read_loop(self) -> None:
        reader = self.proc.stdout
        assert reader is not None
        try:
            while True:
                length = None
                while True:
                    line = await reader.readline()
                    if not line:
                        raise EOFError
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                assert length is not None
                body = await reader.readexactly(length)
                at = time.time()
                message = json.loads(body)
                if "method" in message and "id" in message:  # a request from the server
                    answer = self.handle_request(at, message["method"], message.get("params"))
                    self._write({"jsonrpc": "2.0", "id": message["id"], "result": answer})
                elif "method" in message:
                    note = Notification(at, message["method"], message.get("params"))
                    self.notifications.append(note)
                    if self.on_notification is not None:
                        self.on_notification(note)
                else:
                    future = self._pending.pop(message["id"], None)
                    if future is not None and not future.done():
                        if "error" in message:
                            future.set_exception(RuntimeError(str(message["error"])))
                        else:
                            future.set_result(message.get("result"))
        except (EOFError, asyncio.IncompleteReadError, ConnectionError):
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(EOFError("the server closed its output"))

    def handle_request(self, at: float, method: str, params: Any) -> Any:
        """The result of a request from the server, read at time `at` (time.time())."""
        return None

    async def initialize(
        self,
        root: str,
        init_options: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> Any:
        if capabilities is None:
            capabilities = {"experimental": {"agent": {"approvals": True}}}
        result = await self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": "file://" + root,
                "capabilities": capabilities,
                "initializationOptions": init_options or {},
            },
        )
        self.notify("initialized", {})
        return result

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
