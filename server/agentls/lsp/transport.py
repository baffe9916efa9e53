"""JSON-RPC over stdio, hardened: every request gets an answer, whatever arrives.

- params of agent/* requests are validated with the protocol's pydantic models: a bad one is
  -32602 naming the field (`parse`), never a crash;
- a request pygls cannot dispatch (a bad envelope, an id that cannot be answered, params it cannot
  structure) is answered with an error instead of dropped (AgentProtocol);
- a frame that is not JSON still gets its request answered (-32700), found without parsing;
- the errors handlers raise on purpose are logged as one line, not a traceback (AnsweredErrors);
- `run_stdio` reads stdin and writes stdout until `exit` or the end of the input.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    lsp_method,
)
from pygls.protocol import default_converter as pygls_default_converter

from agentls.protocol.models import PROTOCOL_VERSION
from agentls.session import StoreError

log = logging.getLogger(__name__)
P = TypeVar("P", bound=BaseModel)
T = TypeVar("T")
# LSP's RequestFailed: a request that is valid but cannot be served now.
REQUEST_FAILED = -32803


# ---- params and errors ------------------------------------------------------------------


def invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=message)


def parse(model: type[P], raw: Any) -> P:
    """Validate params; a failure names each bad field (camelCase, as sent)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise invalid(f"Invalid params: expected an object, got {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(x) for x in err["loc"]) or "params"
            problems.append(f"{where}: {err['msg']}")
        raise invalid("Invalid params: " + "; ".join(problems)) from None


async def known_session(session_id: str, call: Callable[[str], Awaitable[T]]) -> T:
    """await call(session_id); an unknown session (KeyError) is invalid params naming it."""
    try:
        return await call(session_id)
    except KeyError:
        raise invalid(f"Invalid params: sessionId: unknown session {session_id!r}") from None


def request_failed(message: str) -> JsonRpcException:
    """RequestFailed: a valid request the server cannot serve now, with its one line."""
    return JsonRpcException(code=REQUEST_FAILED, message=message)


def store_failed(exc: StoreError) -> JsonRpcException:
    """The answer to a request the store could not serve: RequestFailed, with its one line."""
    return request_failed(f"agentls: {exc.message}")


def answering_store_errors(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """A request handler whose store faults (and a session busy in another process) are answered
    as RequestFailed with the store's one line, not as an internal error with a traceback."""

    @functools.wraps(handler)
    async def answer(*args: Any) -> Any:
        try:
            return await handler(*args)
        except StoreError as exc:
            raise store_failed(exc) from None

    return answer


def converter() -> Any:
    """pygls' converter, but params of methods it does not know stay plain JSON objects (it would
    turn them into namedtuples, losing keys it cannot name)."""
    conv = pygls_default_converter()  # type: ignore[no-untyped-call]

    def keep(obj: dict[str, Any], cls: type) -> Any:
        # JSON-RPC lets a call leave out params (agent/listSessions needs none).
        return cls(**{"params": None, **obj})

    def keep_result(obj: dict[str, Any], cls: type) -> Any:
        # The answer to a request of ours pygls has no type for (agent/languageRequest): plain
        # JSON, as the client sent it (EditorLanguages checks it against the LSP method's type).
        return cls(id=obj.get("id"), jsonrpc=obj.get("jsonrpc"), result=obj.get("result"))

    conv.register_structure_hook(JsonRPCRequestMessage, keep)
    conv.register_structure_hook(JsonRPCNotification, keep)
    conv.register_structure_hook(JsonRPCResponseMessage, keep_result)
    return conv


# ---- the protocol -----------------------------------------------------------------------


def is_request_id(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


class AgentProtocol(LanguageServerProtocol):
    """Adds the agent's experimental capability to the initialize result, and answers every
    request it cannot dispatch with a JSON-RPC error (pygls would drop it silently, and the
    client would wait forever)."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"agent": {"protocolVersion": PROTOCOL_VERSION}}
        return result

    def _check_handler_result(self, future: Any) -> None:
        # pygls 2.1 keeps the future of every notification whose handler is a coroutine, a
        # generator or a thread in _request_futures, under an id nobody answers, for the
        # server's life: one a didChange, didSave, agent/diagnostics (bench/long_session.py:
        # about 1 KB a step). This is the notifications' done callback: drop it there.
        for key, pending in self._request_futures.items():
            if pending is future:
                del self._request_futures[key]
                break
        super()._check_handler_result(future)

    def answer_error(self, msg_id: Any, code: int, message: str) -> None:
        try:
            self._send_response(msg_id, error=types.ResponseError(code=code, message=message))
        except Exception:  # pragma: no cover - never let an error answer break the loop
            log.exception("could not answer request %r", msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except Exception as exc:
            if "method" in data and is_request_id(data.get("id")):
                code = exc.code if isinstance(exc, JsonRpcException) else -32603
                detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
                self.answer_error(data["id"], code, f"{detail} (method {data['method']!r})")
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict | list) or not hasattr(message, "jsonrpc"):
            # Not a JSON-RPC 2.0 message: no "jsonrpc" member, or a batch, string, number, null.
            msg_id = message.get("id") if isinstance(message, dict) else None
            if isinstance(message, dict) and "method" in message and is_request_id(msg_id):
                self.answer_error(msg_id, -32600, 'Invalid Request: "jsonrpc": "2.0" is required')
            elif not isinstance(message, dict):
                self.answer_error(None, -32600, "Invalid Request: expected a JSON object")
            log.warning("ignoring a message that is not JSON-RPC 2.0")
            return
        msg_id = getattr(message, "id", None)
        if message.jsonrpc != self.VERSION and hasattr(message, "method"):
            if is_request_id(msg_id):
                self.answer_error(msg_id, -32600, 'Invalid Request: "jsonrpc" must be "2.0"')
            return
        if hasattr(message, "method") and msg_id is not None and not is_request_id(msg_id):
            # An id that is an object, an array or a float cannot be answered reliably.
            self.answer_error(None, -32600, "Invalid Request: id must be a string or an integer")
            return
        super().handle_message(message)


# ---- broken frames ----------------------------------------------------------------------

_SCALAR = re.compile(r'\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*"|null|true|false)')


def top_level_fields(body: bytes, names: tuple[str, ...]) -> dict[str, Any]:
    """Scalar members of the top-level object of a JSON text that json.loads refused (too deep,
    cut short, ...), found without recursion: enough to answer the request with an error."""
    text = body.decode("utf-8", "replace")
    found: dict[str, Any] = {}
    depth = 0
    i = 0
    n = len(text)
    while i < n and len(found) < len(names):
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            k = j + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            if depth == 1 and k < n and text[k] == ":":
                try:
                    key = json.loads(text[i : j + 1])
                except ValueError:
                    key = None
                match = _SCALAR.match(text, k + 1)
                if key in names and key not in found and match is not None:
                    try:
                        found[key] = json.loads(match.group(1))
                    except ValueError:
                        pass
            i = j + 1
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        i += 1
    return found


class RememberingReader:
    """The stdin reader, keeping the last message body so that one that cannot be parsed can
    still be answered."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.last_body = b""

    async def readline(self) -> bytes:
        line: bytes = await self.inner.readline()
        return line

    async def readexactly(self, n: int) -> bytes:
        self.last_body = await self.inner.readexactly(n)
        return self.last_body


class AnsweredErrors(logging.Filter):
    """pygls logs every error a request handler raises, with its traceback. The JSON-RPC errors
    this server raises (invalid params, a request refused while the settings are bad, a cancelled
    request) are answers the client gets, not failures of the server: one line at INFO instead
    (shown with AGENTLS_LOG=INFO). Any other exception keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, JsonRpcException):
            record.msg = f"{record.getMessage()}: answered with error {exc.code}: {exc.message}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


# ---- the loop ---------------------------------------------------------------------------


def run_stdio(server: LanguageServer, close: Callable[[], Awaitable[None]]) -> int:
    """Serve on stdin/stdout until `exit` (its exit code) or the end of the input (0); `close` runs
    before the loop ends, either way."""
    from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

    logging.getLogger("pygls.protocol.json_rpc").addFilter(AnsweredErrors())
    stop_event = threading.Event()
    server._stop_event = stop_event
    protocol = server.protocol
    assert isinstance(protocol, AgentProtocol)
    reader = RememberingReader(StdinAsyncReader(sys.stdin.buffer, server.thread_pool))
    protocol.set_writer(StdoutWriter(sys.stdout.buffer))

    def on_error(exc: Exception, source: Any) -> None:
        server.report_server_error(exc, source)
        body = reader.last_body
        try:
            json.loads(body)
        except (ValueError, RecursionError):
            # Not JSON (or nested too deep to parse): a request among it still gets its answer.
            fields = top_level_fields(body, ("id", "method"))
            if "method" in fields and is_request_id(fields.get("id")):
                protocol.answer_error(fields["id"], -32700, f"Parse error: {exc}"[:500])

    async def main() -> None:
        try:
            await run_async(
                stop_event=stop_event,
                reader=reader,
                protocol=protocol,
                logger=log,
                error_handler=on_error,
            )
        finally:
            await close()

    code = 0
    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("connection to the client lost; stopped")
    except SystemExit as exc:  # the `exit` notification
        code = exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
    return code
