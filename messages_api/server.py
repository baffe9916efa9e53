"""The HTTP server: ``POST /v1/messages`` (and ``/count_tokens``) answered from a FIFO of scripted
replies, every request recorded, and the ``/_test/`` endpoints a test process uses to drive a
server in another process (enqueue, release, requests, clear).

Requests are validated as the real API does (:mod:`messages_api.validation`), then answered as a
Message or as an SSE stream (:mod:`messages_api.sse`) with chunked transfer encoding on a
keep-alive HTTP/1.1 connection, with the faults the reply asks for (holds, cuts, resets, mid-stream
errors, broken frames)."""

from __future__ import annotations

import json
import select
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from messages_api.caching import PromptCache
from messages_api.replies import (
    DEFAULT_REPLY,
    ErrorReply,
    Reply,
    ReplyLike,
    ReplySpec,
    error,
    random_id,
    reply,
    text,
)
from messages_api.scripts import reply_from_json
from messages_api.sse import error_frame, estimate_input_tokens, render_message, sse_frames
from messages_api.validation import validate_request


def _new_message_id() -> str:
    return random_id("msg_01")


def _new_request_id() -> str:
    return random_id("req_01")


@dataclass
class RecordedRequest:
    """One HTTP request seen by the server (bodies are parsed JSON, headers lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 200
    rejected: bool = False  # refused by auth/validation/JSON parsing (no reply consumed)
    error: str | None = None  # the error message sent, if any
    stream: bool = False
    reply: ReplySpec | None = None  # the scripted reply used, if any
    request_id: str = ""
    disconnected: bool = False  # client went away before the response was complete
    # As time.time() (comparable across processes, for latency measurements): when the request's
    # headers had been read; for streams, just before the response's first byte was written,
    # when a held stream went on (just before its next event was written), and when its last
    # byte was.
    received_at: float | None = None
    first_byte_at: float | None = None
    resumed_at: float | None = None
    finished_at: float | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "status": self.status,
            "rejected": self.rejected,
            "error": self.error,
            "stream": self.stream,
            "request_id": self.request_id,
            "received_at": self.received_at,
            "first_byte_at": self.first_byte_at,
            "resumed_at": self.resumed_at,
            "finished_at": self.finished_at,
        }


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128
    api: MessagesAPIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError | ValueError):  # disconnects, closed sockets at shutdown
            return
        super().handle_error(request, client_address)


_WRITE_CHUNK = 64 * 1024


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    # -- plumbing -------------------------------------------------------------------
    def setup(self) -> None:
        super().setup()
        try:  # headers and body are separate writes: avoid Nagle + delayed-ACK 40 ms stalls
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        self.server.api._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.api._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.api.verbose:
            sys.stderr.write("messages_api: " + (format % args) + "\n")

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _send_json(
        self, status: int, obj: Any, rid: str, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", rid)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, rec: RecordedRequest, err: ErrorReply, *, rejected: bool) -> None:
        rec.status = err.status
        rec.error = err.message
        rec.rejected = rejected
        self.server.api._record(rec)
        self._send_json(err.status, err.body(rec.request_id), rec.request_id, err.headers)

    def _peer_closed(self) -> bool:
        try:
            data = self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            return True
        return bool(data == b"")

    def _pause(
        self, rec: RecordedRequest, seconds: float | None, event: threading.Event | None
    ) -> bool:
        """Wait ``seconds`` or until ``event`` is set. False if the client left or we stop."""
        api = self.server.api
        deadline = None if seconds is None else time.monotonic() + seconds
        if event is not None:
            api._holding(event, add=True)
        try:
            return self._pause_loop(rec, api, deadline, event)
        finally:
            if event is not None:
                api._holding(event, add=False)

    def _pause_loop(
        self,
        rec: RecordedRequest,
        api: MessagesAPIServer,
        deadline: float | None,
        event: threading.Event | None,
    ) -> bool:
        while True:
            if event is not None and event.is_set():
                return True
            if api._closing.is_set():
                return False
            step = 0.02
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                step = min(step, remaining)
            try:
                readable, _, _ = select.select([self.connection], [], [], step)
            except (OSError, ValueError):
                rec.disconnected = True
                return False
            if readable:
                if self._peer_closed():
                    rec.disconnected = True
                    return False
                time.sleep(step)  # pipelined data; nothing to do but wait

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- HTTP methods -----------------------------------------------------------------
    def do_GET(self) -> None:
        rid = _new_request_id()
        path = urlsplit(self.path).path
        if path in ("/", "/health"):
            self._send_json(200, {"ok": True}, rid)
        elif path.startswith("/_test/"):
            self._control(self.server.api, path, b"")
        else:
            err = error(404, "not_found_error", f"Not found: {self.command} {path}")
            self._send_json(404, err.body(rid), rid)

    def do_POST(self) -> None:
        api = self.server.api
        received_at = time.time()
        raw = self._read_body()
        path = urlsplit(self.path).path
        if path.startswith("/_test/"):
            self._control(api, path, raw)
            return
        rid = _new_request_id()
        headers = {k.lower(): v for k, v in self.headers.items()}
        rec = RecordedRequest(self.command, path, headers, None, request_id=rid)
        rec.received_at = received_at
        try:
            self._handle_post(api, rec, raw)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            rec.disconnected = True
            self.close_connection = True
        finally:
            rec.done.set()

    def _control(self, api: MessagesAPIServer, path: str, raw: bytes) -> None:
        """Test-process hooks for subprocess mode (not recorded)."""
        rid = _new_request_id()
        try:
            if path == "/_test/enqueue":
                data = json.loads(raw.decode("utf-8"))
                items = data if isinstance(data, list) else [data]
                api.enqueue(*[reply_from_json(x) for x in items])
                self._send_json(200, {"pending": api.pending}, rid)
            elif path == "/_test/release":
                self._send_json(200, {"released": api.release_holds()}, rid)
            elif path == "/_test/requests":
                self._send_json(200, [r.to_json() for r in api.all_requests], rid)
            elif path == "/_test/clear":
                api.clear()
                self._send_json(200, {"cleared": True}, rid)
            else:
                self._send_json(404, error(404, "not_found_error", path).body(rid), rid)
        except (ValueError, KeyError, TypeError) as exc:
            self._send_json(400, error(400, "invalid_request_error", repr(exc)).body(rid), rid)

    def _handle_post(self, api: MessagesAPIServer, rec: RecordedRequest, raw: bytes) -> None:
        path = rec.path
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._send_error(
                rec, error(404, "not_found_error", f"Not found: POST {path}"), rejected=True
            )
            return
        if api.strict_auth:
            # This SDK build sends api_key as "Authorization: Bearer <key>"; older ones as x-api-key.
            key = rec.headers.get("x-api-key")
            auth = rec.headers.get("authorization", "")
            if not key and auth[:7].lower() == "bearer ":
                key = auth[7:].strip()
            if not key:
                self._send_error(
                    rec,
                    error(401, "authentication_error", "x-api-key header is required"),
                    rejected=True,
                )
                return
            if api.api_key is not None and key != api.api_key:
                self._send_error(
                    rec, error(401, "authentication_error", "invalid x-api-key"), rejected=True
                )
                return
        try:
            rec.body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._send_error(
                rec,
                error(400, "invalid_request_error", f"Request body is not valid JSON: {exc}"),
                rejected=True,
            )
            return
        body = rec.body
        count_tokens = path.endswith("/count_tokens")
        rec.stream = bool(isinstance(body, dict) and body.get("stream") is True)
        if api.validate:
            problem = None
            if "anthropic-version" not in rec.headers:
                problem = "anthropic-version: header is required"
            problem = problem or validate_request(body, count_tokens=count_tokens)
            if problem is not None:
                self._send_error(rec, error(400, "invalid_request_error", problem), rejected=True)
                return
        if not isinstance(body, dict):
            self._send_error(
                rec,
                error(400, "invalid_request_error", "Request body must be a JSON object"),
                rejected=True,
            )
            return
        if count_tokens:
            api._record(rec)
            self._send_json(200, {"input_tokens": estimate_input_tokens(body)}, rec.request_id)
            return

        try:
            spec = api._next_reply(body)
        except Exception as exc:  # a failing callable reply: surface it as a 500
            self._send_error(
                rec, error(500, "api_error", f"scripted reply raised {exc!r}"), rejected=False
            )
            return
        rec.reply = spec
        if isinstance(spec, ErrorReply):
            self._send_error(rec, spec, rejected=False)
            return
        api._record(rec)
        if spec.reset:
            rec.disconnected = True
            self.close_connection = True
            try:  # linger 0: close() sends RST instead of FIN
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
            except OSError:
                pass
            return
        cache_usage = api._cache.usage(body) if api.simulate_cache else None
        if rec.stream:
            self._stream(rec, spec, body, cache_usage)
        else:
            self._respond(rec, spec, body, cache_usage)

    def _respond(
        self,
        rec: RecordedRequest,
        spec: Reply,
        body: dict[str, Any],
        cache_usage: dict[str, int] | None = None,
    ) -> None:
        if spec.delay_s and not self._pause(rec, spec.delay_s, None):
            self._drop()
            return
        if spec.hold is not None and not self._pause(rec, None, spec.hold):
            self._drop()
            return
        if spec.cut_after is not None:
            self._drop()
            return
        message = render_message(spec, body, spec.id or _new_message_id(), cache_usage)
        self._send_json(200, message, rec.request_id)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))

    def _stream(
        self,
        rec: RecordedRequest,
        spec: Reply,
        body: dict[str, Any],
        cache_usage: dict[str, int] | None = None,
    ) -> None:
        frames = sse_frames(
            spec, render_message(spec, body, spec.id or _new_message_id(), cache_usage)
        )
        rec.first_byte_at = time.time()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", rec.request_id)
        self.end_headers()

        slow = (spec.delay_s > 0 or spec.hold is not None or spec.cut_after is not None
                or spec.error_event is not None or spec.garbage is not None)  # fmt: skip
        if not slow:
            blob = b"".join(frames)
            for k in range(0, len(blob), _WRITE_CHUNK):
                self._write_chunk(blob[k : k + _WRITE_CHUNK])
            self.wfile.write(b"0\r\n\r\n")
            rec.finished_at = time.time()
            return

        preamble = 2 if spec.ping else 1
        hold_at = spec.hold_after if spec.hold_after is not None else preamble
        error_at = spec.error_after if spec.error_after is not None else preamble
        garbage_at = spec.garbage_after if spec.garbage_after is not None else preamble
        for n in range(len(frames) + 1):
            if spec.garbage is not None and n == garbage_at:
                self._write_chunk(spec.garbage)
            if spec.cut_after is not None and n == spec.cut_after:
                self._drop()
                return
            if spec.error_event is not None and n == error_at:
                self._write_chunk(error_frame(spec.error_event))
                break
            if spec.hold is not None and n == hold_at:
                if not self._pause(rec, None, spec.hold):
                    self._drop()
                    return
                rec.resumed_at = time.time()
            if n == len(frames):
                break
            if spec.delay_s > 0 and n > 0 and not self._pause(rec, spec.delay_s, None):
                self._drop()
                return
            self._write_chunk(frames[n])
        if spec.cut_after is not None and spec.cut_after > len(frames):
            self._drop()  # everything sent but the terminating chunk
            return
        self.wfile.write(b"0\r\n\r\n")
        rec.finished_at = time.time()


class MessagesAPIServer:
    """Messages API test double on 127.0.0.1 in a background thread; see the package doc.

    Args:
        replies: initial FIFO contents (same as calling :meth:`enqueue`).
        default: answer used when the queue is empty (a ReplyLike; callables are called per
            request).  Defaults to an end_turn text reply ``"(no scripted reply)"``.
        validate: reject invalid requests with 400 invalid_request_error like the real API.
        strict_auth: require a key (401 authentication_error otherwise) in ``x-api-key`` or
            ``Authorization: Bearer`` (which is how this SDK build sends ``api_key``); if
            ``api_key`` is given, the key must also match.
        record_path: append each recorded request as a JSON line to this file.
        simulate_cache: report cache reads and writes in usage from the cache_control
            breakpoints of the requests seen so far (see :class:`messages_api.caching.PromptCache`).
    """

    def __init__(
        self,
        replies: Iterable[ReplyLike] = (),
        *,
        default: ReplyLike | None = None,
        validate: bool = True,
        strict_auth: bool = False,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record_path: str | Path | None = None,
        verbose: bool = False,
        simulate_cache: bool = False,
    ) -> None:
        self.default: ReplyLike = default if default is not None else DEFAULT_REPLY
        self.validate = validate
        self.strict_auth = strict_auth
        self.api_key = api_key
        self.verbose = verbose
        self.simulate_cache = simulate_cache
        self._cache = PromptCache()
        self.record_path = Path(record_path) if record_path is not None else None
        self._host = host
        self._port = port
        self._queue: deque[ReplyLike] = deque(replies)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._requests: list[RecordedRequest] = []
        self._all: list[RecordedRequest] = []
        self._conns: set[socket.socket] = set()
        self._holds: list[threading.Event] = []  # events streams are stalled on now
        self._closing = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> Self:
        if self._httpd is not None:
            return self
        httpd = _HTTPServer((self._host, self._port), _Handler)
        httpd.api = self
        self._httpd = httpd
        self._closing.clear()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01},
            name="messages-api-server", daemon=True,
        )  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd = self._httpd
        if httpd is None:
            return
        self._closing.set()
        # Started again, it listens at the same address (an API that was down comes back).
        self._port = int(httpd.server_address[1])
        httpd.shutdown()
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    close = stop

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            if self._port:  # stopped: where it listened, and will again when started
                return self._port
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    # -- script -------------------------------------------------------------------------
    def enqueue(self, *replies: ReplyLike) -> None:
        """Append replies to the FIFO (one is consumed per accepted /v1/messages request)."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Number of scripted replies not consumed yet."""
        with self._lock:
            return len(self._queue)

    def _next_reply(self, body: dict[str, Any]) -> ReplySpec:
        with self._lock:
            item = self._queue.popleft() if self._queue else self.default
        if callable(item) and not isinstance(item, Reply | ErrorReply):
            item = item(body)
        if isinstance(item, str):
            return reply(text(item))
        if not isinstance(item, Reply | ErrorReply):
            raise TypeError(f"reply must be Reply, ErrorReply or str, got {type(item).__name__}")
        return item

    def release_holds(self) -> int:
        """Set every ``hold`` event a stream is currently stalled on; returns how many."""
        with self._lock:
            events = list(self._holds)
        for ev in events:
            ev.set()
        return len(events)

    def _holding(self, event: threading.Event, *, add: bool) -> None:
        with self._lock:
            if add:
                self._holds.append(event)
            else:
                self._holds.remove(event)

    # -- recording ----------------------------------------------------------------------
    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)

    def _record(self, rec: RecordedRequest) -> None:
        with self._cond:
            self._all.append(rec)
            if rec.path == "/v1/messages":
                self._requests.append(rec)
            if self.record_path is not None:
                with self.record_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(rec.to_json()) + "\n")
            self._cond.notify_all()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of recorded ``POST /v1/messages`` requests (including rejected ones)."""
        with self._lock:
            return list(self._requests)

    @property
    def all_requests(self) -> list[RecordedRequest]:
        """Snapshot of every recorded request, any path (count_tokens, 404s...)."""
        with self._lock:
            return list(self._all)

    @property
    def bodies(self) -> list[Any]:
        """Bodies of :attr:`requests`."""
        return [r.body for r in self.requests]

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least ``n`` /v1/messages requests were recorded; TimeoutError if not."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(
                    f"expected {n} requests within {timeout}s, got {len(self._requests)}"
                )
            return list(self._requests)

    def clear(self) -> None:
        """Forget recorded requests and queued replies."""
        with self._lock:
            self._requests.clear()
            self._all.clear()
            self._queue.clear()
            self._cache.clear()
