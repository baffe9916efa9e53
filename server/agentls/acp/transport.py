"""ACP's newline-delimited JSON over stdin/stdout, hardened: a frame that is not JSON, not an
object, has an id that cannot be one (an object, a boolean), a method that is not a string, or no
"jsonrpc": "2.0", is answered with a JSON-RPC error (-32700 or -32600) and the server reads on.
The SDK's own reader logs and drops what does not parse, and stops at a JSON array."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

log = logging.getLogger(__name__)

# A frame longer than this is refused (-32600) and skipped to its end.
MAX_FRAME_BYTES = 64 * 1024 * 1024
TOO_LARGE = b"\0(too large)"


def _valid_id(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


def check_frame(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(message, None) for a frame the connection can take; (None, error response) for one it
    cannot (the response is None when the frame asks for none: a broken notification)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None, _error(None, -32700, "Parse error: the frame is not JSON")
    if not isinstance(message, dict):
        return None, _error(None, -32600, "Invalid request: a message is a JSON object")
    request_id = message.get("id")
    if not _valid_id(request_id):
        return None, _error(None, -32600, "Invalid request: id: must be a string or an integer")
    method = message.get("method")
    if "method" in message and not isinstance(method, str):
        why = "Invalid request: method: must be a string"
        return None, _error(request_id, -32600, why) if "id" in message else None
    if "method" not in message and "id" not in message:
        return None, _error(None, -32600, "Invalid request: neither a method nor an id")
    if message.get("jsonrpc") != "2.0":
        why = 'Invalid request: jsonrpc: must be "2.0"'
        return None, _error(request_id, -32600, why) if "id" in message else None
    if "method" in message and message.get("params") is None:
        message["params"] = {}  # JSON-RPC lets a request leave its params out
    return message, None


def invalid_params_message(data: Any) -> str:
    """-32602's message naming the fields: from the SDK's validation errors ({"errors": [{"loc",
    "msg"}]}) or agentls' own ({"field", "message"})."""
    if isinstance(data, dict) and isinstance(data.get("field"), str):
        return f"Invalid params: {data['field']}: {data.get('message', 'invalid')}"
    problems = []
    for problem in (data or {}).get("errors", []) if isinstance(data, dict) else []:
        if isinstance(problem, dict):
            where = ".".join(str(part) for part in problem.get("loc", ())) or "params"
            problems.append(f"{where}: {problem.get('msg', 'invalid')}")
    return "Invalid params: " + ("; ".join(problems[:5]) or "the params do not fit the method")


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class StdioTransport:
    """The acp SDK's Transport (send, receive, close) over a byte reader and writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        error = message.get("error")
        if isinstance(error, dict) and error.get("code") == -32602:
            error["message"] = invalid_params_message(error.get("data"))
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        async with self._lock:
            self._writer.write(data.encode("utf-8", "surrogatepass"))
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if not line.strip():
                continue
            if line is TOO_LARGE:
                why = f"Invalid request: a frame is at most {MAX_FRAME_BYTES:,} bytes"
                await self.send(_error(None, -32600, why))
                continue
            message, error = check_frame(line)
            if message is not None:
                return message
            if error is not None:
                log.info("refused a frame: %s", error["error"]["message"])
                await self.send(error)

    async def _read_line(self) -> bytes | None:
        """The next line; None at the end of input; TOO_LARGE for a line over MAX_FRAME_BYTES,
        once the rest of it is skipped."""
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = await self._reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:
                chunk = await self._reader.readexactly(exc.consumed)
                partial = True
            except asyncio.IncompleteReadError as exc:
                chunk, partial = exc.partial, False
                if not chunk and not chunks:
                    return None
            else:
                partial = False
            size += len(chunk)
            if size <= MAX_FRAME_BYTES:
                chunks.append(chunk)
            if not partial:
                return b"".join(chunks) if size <= MAX_FRAME_BYTES else TOO_LARGE

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
