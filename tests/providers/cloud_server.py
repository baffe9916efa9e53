"""Bedrock and Vertex on loopback, for the endpoint-override tests: the URL paths and bodies the
anthropic SDK's AnthropicBedrock / AnthropicVertex send, checked, and answered from
messages_api's scripted replies. Bedrock's streaming answer is framed as AWS event-stream
messages (what botocore decodes); Vertex's is the Messages API's SSE. Also an OAuth token
endpoint, for Google's Application Default Credentials to refresh against."""

from __future__ import annotations

import base64
import json
import re
import struct
import threading
import zlib
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import unquote, urlsplit

from messages_api import Reply, render_message, reply, sse_frames, text, validate_request

BEDROCK_PATH = re.compile(r"^/model/(?P<model>[^/]+)/invoke-with-response-stream$")
VERTEX_PATH = re.compile(
    r"^/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/models/"
    r"(?P<model>[^/:]+):streamRawPredict$"
)
ACCESS_TOKEN = "ya29.local-test-token"


@dataclass
class Seen:
    kind: str  # "bedrock", "vertex", "token"
    path: str
    headers: dict[str, str]
    body: Any
    model: str | None = None
    project: str | None = None
    region: str | None = None
    problem: str | None = None


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack("B", len(raw_name)) + raw_name + b"\x07"
        + struct.pack(">H", len(raw_value)) + raw_value
    )  # fmt: skip


def event_stream_message(payload: dict[str, Any]) -> bytes:
    """One AWS event-stream message carrying a Messages API event, as Bedrock sends it:
    `{"bytes": base64(event JSON)}` under the `chunk` event type."""
    headers = (
        _header(":event-type", "chunk")
        + _header(":content-type", "application/json")
        + _header(":message-type", "event")
    )
    body = json.dumps({"bytes": base64.b64encode(json.dumps(payload).encode()).decode()}).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def _events(spec: Reply, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The scripted reply's stream events as JSON objects."""
    out = []
    for frame in sse_frames(spec, render_message(spec, body, "msg_01cloudtest")):
        for line in frame.decode().splitlines():
            if line.startswith("data: "):
                out.append(json.loads(line[6:]))
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        cloud: CloudServer = self.server.cloud
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = unquote(urlsplit(self.path).path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        if path == "/token":  # Google's OAuth token endpoint: a refresh-token grant
            cloud.seen.append(Seen("token", path, headers, raw.decode()))
            token = {"access_token": ACCESS_TOKEN, "expires_in": 3600, "token_type": "Bearer"}
            self._send(200, json.dumps(token).encode(), "application/json")
            return
        body = json.loads(raw) if raw else None
        bedrock, vertex = BEDROCK_PATH.match(path), VERTEX_PATH.match(path)
        match = bedrock or vertex
        if match is None or not isinstance(body, dict):
            cloud.seen.append(Seen("unknown", path, headers, body, problem="no such endpoint"))
            self._send(404, b'{"message": "not found"}', "application/json")
            return
        seen = Seen("bedrock" if bedrock else "vertex", path, headers, body, match["model"])
        if vertex:
            seen.project, seen.region = match["project"], match["region"]
        cloud.seen.append(seen)
        # The API version travels in the body on both clouds (not as a header).
        if not isinstance(body.get("anthropic_version"), str) or not body["anthropic_version"]:
            seen.problem = "anthropic_version: Field required"
        elif "model" in body:
            seen.problem = "model: the model belongs in the URL"
        else:
            messages_body = {k: v for k, v in body.items() if k != "anthropic_version"}
            seen.problem = validate_request({**messages_body, "model": seen.model})
        if seen.problem is not None:
            error = {"type": "error", "error": {"type": "invalid_request_error",
                                                "message": seen.problem}}  # fmt: skip
            self._send(400, json.dumps(error).encode(), "application/json")
            return
        spec = cloud.next_reply()
        events = _events(spec, {**body, "model": seen.model})
        if bedrock:
            data = b"".join(event_stream_message(e) for e in events)
            self._send(200, data, "application/vnd.amazon.eventstream")
        else:
            data = b"".join(
                f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events
            )
            self._send(200, data, "text/event-stream")


class CloudServer:
    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self._replies: deque[Reply] = deque()
        self._httpd: ThreadingHTTPServer | None = None

    def enqueue(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    def next_reply(self) -> Reply:
        return self._replies.popleft() if self._replies else reply(text("(no scripted reply)"))

    def requests(self, kind: str) -> list[Seen]:
        return [s for s in self.seen if s.kind == kind]

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> Self:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.cloud = self  # type: ignore[attr-defined]
        self._httpd = httpd
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01},
                         daemon=True).start()  # fmt: skip
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
