"""For webfetch's tests: a real HTTP server on loopback whose routes a test sets, and a tool
context that decides with the real permission rules (deny raises, ask is answered by the test)."""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
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
    cookie: str | None = None


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
                web.seen.append(
                    Seen(self.path, self.headers.get("Host"), self.headers.get("Cookie"))
                )
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


class TLSRecorder:
    """A TLS listener on 127.0.0.1 with a self-signed certificate for "localhost": it records the
    server name (SNI) each client sends, then lets the handshake go on (a client that checks
    certificates then refuses this one)."""

    def __init__(self, directory: Path) -> None:
        self.names: list[str | None] = []
        cert, key = _self_signed(directory, "localhost")
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.context.sni_callback = self._sni
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _sni(self, _sock: ssl.SSLObject | ssl.SSLSocket, name: str | None, _ctx: Any) -> None:
        self.names.append(name)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            with conn:
                try:
                    with self.context.wrap_socket(conn, server_side=True):
                        pass
                except (ssl.SSLError, OSError):
                    pass  # the client refused the certificate

    def close(self) -> None:
        self.sock.close()


def _self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path
