"""webfetch against a hostile web server: redirects to other schemes and odd spellings of a private
host, a gzip bomb, an endless body or headers, a server that drips. Each attack is counted in the
security table."""

from __future__ import annotations

import gzip
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.tools.base import ToolError
from agentls.tools.webfetch import MAX_READ_BYTES, WebFetchTool
from tests.security.conftest import SecurityFigures
from tests.tools.webfetch_support import LocalWeb, Response, RulesContext, local_web

REDIRECT = "webfetch redirect to another scheme or a private host"
BODY = "webfetch hostile body (bomb, endless, drip)"


# ---- webfetch: redirects ---------------------------------------------------------------------

# Where a page on an allowed host (127.0.0.1) redirects: another scheme, or a private host
# spelled so that a check on the text could miss it. {port}: the test server's own port.
LOCATIONS = [
    "file:///etc/passwd",
    "FILE:///etc/passwd",
    "gopher://127.0.0.1:{port}/_GET%20/secret",
    "data:text/plain,secret",
    "ftp://127.0.0.1/",
    "javascript:alert(1)",
    "//localhost:{port}/secret",  # scheme-relative
    "http://localhost.:{port}/secret",
    "HTTP://LOCALHOST:{port}/secret",
    "http://allowed.example@localhost:{port}/secret",  # userinfo
    "http://127.0.0.1:{port}@localhost:{port}/secret",
    "http://[fe80::1%25eth0]/secret",  # an IPv6 zone id
    "http://[::ffff:127.0.0.1%25lo]:{port}/secret",
    "http://0:{port}/secret",
    "http://127.000.000.001:{port}/secret",
    "http://0x7f.0x0.0x0.0x1:{port}/secret",
    "http://%31%32%37.0.0.1:{port}/secret",  # percent-encoded digits
    "http://127.0.0.1\t:{port}/secret",
    "http:/\\localhost:{port}/secret",
    "http://xn--localhost:{port}/secret",
]


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    yield from local_web()


@pytest.mark.parametrize("location", LOCATIONS)
async def test_a_redirect_reaches_no_other_scheme_nor_private_host(
    web: LocalWeb, tmp_path: Path, security_figures: SecurityFigures, location: str
) -> None:
    # Every host allowed, the loopback address by its own name only: "localhost" and the other
    # spellings are not that rule's host, so they stay refused.
    ctx = RulesContext(tmp_path, {"webfetch": {"127.0.0.1": "allow", "*": "allow"}})
    web.routes["/hop"] = Response(302, headers={"Location": location.format(port=web.port)})
    web.routes["/secret"] = Response(body=b"iam-credentials")
    tool = WebFetchTool()
    with security_figures.attempt(REDIRECT):
        try:
            result = await tool.run(tool.parse({"url": web.base + "/hop", "timeout_s": 5}), ctx)
        except ToolError:
            result = None
        assert result is None or "iam-credentials" not in result.output
        assert "/secret" not in [s.path for s in web.seen]


# ---- webfetch: hostile bodies ----------------------------------------------------------------


class RawWeb:
    """A loopback server that writes `head` and then whatever `body()` yields, slowly or forever."""

    def __init__(self, head: bytes, body: Iterator[bytes], delay_s: float = 0.0) -> None:
        self.head, self.body, self.delay_s = head, body, delay_s
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(self.head)
                for chunk in self.body:
                    if self.stop.wait(self.delay_s):
                        return
                    conn.sendall(chunk)
            except OSError:
                return  # the client went away: what is tested

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def endless(chunk: bytes) -> Iterator[bytes]:
    while True:
        yield chunk


def chunked(part: bytes) -> Iterator[bytes]:
    framed = f"{len(part):x}\r\n".encode() + part + b"\r\n"
    return endless(framed)


async def fetch_raw(raw: RawWeb, tmp_path: Path, timeout_s: float = 20) -> tuple[str, bool]:
    ctx = RulesContext(tmp_path, {"webfetch": {"127.0.0.1": "allow"}})
    tool = WebFetchTool()
    try:
        url = f"http://127.0.0.1:{raw.port}/"
        result = await tool.run(tool.parse({"url": url, "timeout_s": timeout_s}), ctx)
        return result.output, bool(result.metadata and result.metadata.get("truncated"))
    except ToolError as exc:
        return str(exc), False
    finally:
        raw.close()


async def test_a_gzip_bomb_is_read_no_further_than_the_cap(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    # 1 MB of zeros compresses to about 1 KB: streamed forever, an unbounded reader fills memory.
    bomb = gzip.compress(b"\0" * 1_000_000)
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    # A gzip stream of many members is still one gzip body (each member decompressed in turn).
    raw = RawWeb(head, chunked(bomb * 64))
    with security_figures.attempt(BODY):
        output, cut = await fetch_raw(raw, tmp_path)
        assert cut, output[:300]
        assert f"first {MAX_READ_BYTES // (1024 * 1024)}" in output


async def test_one_gzip_member_that_inflates_a_thousandfold_is_cut(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    bomb = gzip.compress(b"\0" * 64_000_000, compresslevel=9)  # about 62 KB
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n"
        + f"Content-Length: {len(bomb)}\r\n\r\n".encode()
    )
    raw = RawWeb(head, iter([bomb]))
    with security_figures.attempt(BODY):
        output, cut = await fetch_raw(raw, tmp_path)
        assert cut, output[:300]


async def test_an_endless_chunked_body_is_cut(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
    raw = RawWeb(head, chunked(b"a" * 65536))
    with security_figures.attempt(BODY):
        output, cut = await fetch_raw(raw, tmp_path)
        assert cut, output[:300]


async def test_a_dripping_server_meets_the_time_limit(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    """Slowloris the other way round: a byte every 0.2 s keeps every read's own timeout happy;
    the call's whole time limit still ends it."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
    raw = RawWeb(head, chunked(b"a"), delay_s=0.2)
    with security_figures.attempt(BODY):
        output, _ = await fetch_raw(raw, tmp_path, timeout_s=2)
        assert output.startswith("Timed out"), output[:300]


async def test_endless_headers_are_refused(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    raw = RawWeb(b"HTTP/1.1 200 OK\r\n", endless(b"X-Pad: " + b"a" * 1000 + b"\r\n"))
    with security_figures.attempt(BODY):
        output, _ = await fetch_raw(raw, tmp_path, timeout_s=10)
        assert not output.startswith("Timed out"), output[:300]
        assert "failed" in output, output[:300]
