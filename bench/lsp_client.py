"""The benchmarks' layer over our protocol client (agentls.lsp.client.AgentClient): each
agent/event kept as a Notification stamped with the time its frame was read, and a server's
workspace/applyEdit answered by handle_request() in a subclass (with that time)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.lsp.client import AgentClient, StampingProtocol


@dataclass
class Notification:
    at: float  # time.time() when the whole frame had been read
    method: str
    params: Any


class LspClient(AgentClient):
    def __init__(self) -> None:
        super().__init__(auto_approve=False, record_events=False)
        self.notifications: list[Notification] = []
        self.on_notification: Callable[[Notification], None] | None = None
        self.stderr_lines: list[str] | None = None
        protocol = self.client.protocol

        def on_apply_edit(params: Any) -> Any:
            raw = protocol._converter.unstructure(params)
            return self.handle_request(self._arrived_at(), "workspace/applyEdit", raw)

        self.client.feature("workspace/applyEdit")(on_apply_edit)

    def _arrived_at(self) -> float:
        protocol = self.client.protocol
        assert isinstance(protocol, StampingProtocol)
        return protocol.arrived_at

    def on_event(self, event: dict[str, Any]) -> None:
        note = Notification(self._arrived_at(), "agent/event", event)
        self.notifications.append(note)
        if self.on_notification is not None:
            self.on_notification(note)

    @property
    def proc(self) -> asyncio.subprocess.Process:
        server = self.client._server
        assert server is not None
        return server

    @classmethod
    async def spawn(
        cls,
        cmd: Sequence[str],
        env: dict[str, str],
        cwd: str,
        limit: int = 64 * 1024 * 1024,
        stderr_path: Path | None = None,
    ) -> LspClient:
        client = cls()
        if stderr_path is not None:  # the child writes it itself (`exec`: the same pid)
            cmd = ["/bin/sh", "-c", 'exec "$@" 2>"$0"', str(stderr_path), *cmd]
        await client.start(cwd, env, cmd, limit=limit)
        return client

    async def request(self, method: str, params: Any, timeout: float = 120) -> Any:  # noqa: ASYNC109
        return await super().request(method, params, timeout)

    def handle_request(self, at: float, method: str, params: Any) -> Any:
        """The result of a request from the server, read at time `at` (time.time())."""
        return None

    async def initialize(  # type: ignore[override]
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
            120,
        )
        self.notify("initialized", {})
        return result

    async def close(self) -> None:
        await self.stop()
