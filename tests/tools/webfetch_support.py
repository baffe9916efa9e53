"""For webfetch's tests: a real HTTP server on loopback whose routes a test sets, and a tool
context that decides with the real permission rules (deny raises, ask is answered by the test)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agentls.permission.rules import PermissionRules
from agentls.tools.base import PermissionDenied, PermissionQuery
from tests.tools.conftest import ToolTestContext


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    # Called before the reply (e.g. waits on an event: a server that never answers in time).
    before: Callable[[], None] | None = None


@dataclass
class Seen:
    path: str
    host: str | None


class LocalWeb:
    """A threading HTTP/1.1 server on 127.0.0.1; `routes` maps a path to its Response."""

    def __init__(self) -> None:
        self.routes: dict[str, Response] = {}
        self.seen: list[Seen] = []
        self.release = threading.Event()  # set at teardown: a waiting handler returns
        web = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle(self) -> None:
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client went away (the size cap, a timeout)

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                web.seen.append(Seen(self.path, self.headers.get("Host")))
                response = web.routes.get(self.path, Response(404, b"not here"))
                if response.before is not None:
                    response.before()
                self.send_response(response.status)
                headers = {"Content-Type": "text/plain; charset=utf-8", **response.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                try:
                    self.wfile.write(response.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (the size cap)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def start(self) -> LocalWeb:
        self._thread.start()
        return self

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def local_web() -> Iterator[LocalWeb]:
    web = LocalWeb().start()
    try:
        yield web
    finally:
        web.close()


class RulesContext(ToolTestContext):
    """A ToolContext whose authorize decides with real PermissionRules, as the session's does:
    deny raises; ask records the question and is answered by `reject` (False: "once")."""

    def __init__(self, root: Path, permissions: Any = None) -> None:
        super().__init__(root)
        self.rules = PermissionRules.from_config(permissions)
        self.asked: list[PermissionQuery] = []
        self.reject = False
        self.answer_after_s = 0.0  # how long the "user" takes to answer a question

    async def authorize(self, query: PermissionQuery) -> None:
        self.queries.append(query)
        action = self.rules.evaluate(
            query.tool, query.subject, outside_workspace=query.outside_workspace
        )
        if action == "deny":
            raise PermissionDenied(
                f"Permission denied: a rule forbids {query.tool} on {query.subject}."
            )
        if action == "ask":
            self.asked.append(query)
            await asyncio.sleep(self.answer_after_s)
            if self.reject:
                raise PermissionDenied(f"The user rejected this call ({query.title}).")
