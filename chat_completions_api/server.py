"""The HTTP server: ``POST /v1/chat/completions`` answered from a FIFO of scripted replies, every
request recorded and validated (:mod:`chat_completions_api.validation`), streams sent as SSE
chunks ending in ``data: [DONE]``."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from chat_completions_api.replies import ErrorReply, Reply, ReplyLike, random_id
from chat_completions_api.validation import strict_problem, validate_request

PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 200
    rejected: bool = False  # refused by validation (no reply consumed)
    error: str | None = None


def _estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def chunks(
    spec: Reply, model: str, body: dict[str, Any], strict: bool = False
) -> Iterator[dict[str, Any]]:
    """The stream's chunks: role, reasoning, text, tool-call fragments, finish, usage (none when
    strict: llama-cpp-python ignores `stream_options`)."""
    cid = random_id("chatcmpl-")
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    size = max(1, spec.chunk_size)
    for k in range(0, len(spec.reasoning), size):
        yield chunk({spec.reasoning_field: spec.reasoning[k : k + size]})
    for k in range(0, len(spec.text), size):
        yield chunk({"content": spec.text[k : k + size]})
    pieces: list[list[str]] = []
    for call in spec.tool_calls:
        args = call.arguments_json
        step = max(1, -(-len(args) // max(1, spec.fragments)))
        pieces.append([args[k : k + step] for k in range(0, len(args), step)] or [""])
    for index, call in enumerate(spec.tool_calls):  # the id and the name first, one by one
        first = {"index": index, "id": call.id, "type": "function",
                 "function": {"name": call.name, "arguments": ""}}  # fmt: skip
        yield chunk({"tool_calls": [first]})
    for round_ in range(max((len(p) for p in pieces), default=0)):  # then interleaved fragments
        for index, parts in enumerate(pieces):
            if round_ < len(parts):
                fragment = {"index": index, "function": {"arguments": parts[round_]}}
                yield chunk({"tool_calls": [fragment]})
    yield chunk({}, spec.effective_finish_reason)
    if body.get("stream_options", {}).get("include_usage") and not strict:
        usage = spec.usage or {
            "prompt_tokens": _estimate_tokens(body.get("messages")),
            "completion_tokens": _estimate_tokens([spec.text, spec.reasoning]),
        }
        usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
        yield {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": [], "usage": usage}  # fmt: skip


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    api: ChatCompletionsServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Small writes (headers, chunks) without Nagle's wait for an ACK.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        api = self.server.api
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        rec = RecordedRequest(urlsplit(self.path).path, headers, None)
        if rec.path not in PATHS:
            rec.status, rec.rejected = 404, True
            api._record(rec)
            self._send_json(404, ErrorReply(404, f"Not found: {rec.path}").body())
            return
        try:
            rec.body = json.loads(raw)
        except ValueError as exc:
            rec.body = None
            problem: str | None = f"We could not parse the JSON body of your request ({exc})"
        else:
            problem = validate_request(rec.body)
        if problem is None and api.api_key is not None:
            if headers.get("authorization") != f"Bearer {api.api_key}":
                rec.status, rec.rejected, rec.error = 401, True, "Incorrect API key provided"
                api._record(rec)
                self._send_json(401, ErrorReply(401, rec.error, "invalid_api_key").body())
                return
        if problem is not None:
            rec.status, rec.rejected, rec.error = 400, True, problem
            api._record(rec)
            self._send_json(400, ErrorReply(400, problem).body())
            return
        strict = strict_problem(rec.body) if api.strict else None
        if strict is not None:  # as llama-cpp-python answers: a 500 with pydantic's text
            rec.status, rec.rejected, rec.error = 500, True, strict
            api._record(rec)
            self._send_json(500, ErrorReply(500, strict, "internal_server_error").body())
            return
        spec = api._next_reply(rec.body)
        api._record(rec)
        if isinstance(spec, ErrorReply):
            rec.status, rec.error = spec.status, spec.message
            self._send_json(spec.status, spec.body(), spec.headers)
            return
        self._stream(spec, rec.body)

    def _stream(self, spec: Reply, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def write(data: bytes) -> None:
            self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))

        frames = [b"data: " + json.dumps(c).encode() + b"\n\n"
                  for c in chunks(spec, str(body["model"]), body, self.server.api.strict)]  # fmt: skip
        if not (spec.delay_s or spec.cut_after is not None or spec.error_after is not None):
            write(b"".join(frames) + b"data: [DONE]\n\n")  # a fast model: one write
            self.wfile.write(b"0\r\n\r\n")
            return
        for n, frame in enumerate(frames):
            if spec.delay_s and n > 0:
                time.sleep(spec.delay_s)
            if spec.cut_after is not None and n == spec.cut_after:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if spec.error_after is not None and n == spec.error_after:
                err = {"error": {"message": spec.error_message, "type": "server_error"}}
                write(b"data: " + json.dumps(err).encode() + b"\n\n")
                break
            try:
                write(frame)
            except OSError:  # the client went away (a cancel)
                self.close_connection = True
                return
        else:
            write(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")


class ChatCompletionsServer:
    """A Chat Completions test double on 127.0.0.1 in a background thread. ``url`` is the
    base URL a client takes (``.../v1``). ``api_key``: the key every request must carry.
    ``strict``: refuse what the strictest server users run refuses, as it does (llama-cpp-python:
    a null assistant ``content``, a tool call without its id, type or string arguments, each an
    HTTP 500 with pydantic's validation error) and send no usage chunk (it ignores
    ``stream_options``)."""

    def __init__(
        self,
        replies: Iterable[ReplyLike] = (),
        *,
        api_key: str | None = None,
        strict: bool = False,
    ) -> None:
        self.api_key = api_key
        self.strict = strict
        self._queue: deque[ReplyLike] = deque(replies)
        self._lock = threading.Lock()
        self._all: list[RecordedRequest] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.api = self
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="chat-completions-server", daemon=True)  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def enqueue(self, *replies: ReplyLike) -> None:
        with self._lock:
            self._queue.extend(replies)

    def _next_reply(self, body: dict[str, Any]) -> Reply | ErrorReply:
        with self._lock:
            item = self._queue.popleft() if self._queue else Reply(text="(no scripted reply)")
        if callable(item) and not isinstance(item, Reply | ErrorReply):
            item = item(body)
        return Reply(text=item) if isinstance(item, str) else item

    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self._all.append(rec)

    @property
    def all_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._all)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The accepted requests (validation passed)."""
        return [r for r in self.all_requests if not r.rejected]
