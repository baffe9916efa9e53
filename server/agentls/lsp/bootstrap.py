"""`agentls serve` up to its answer to `initialize`, with the standard library alone.

An editor starts the server and sends `initialize` at once, then waits for the answer; importing
pygls and lsprotocol alone takes most of a second. So the first message is read here, the way
pygls' reader loop reads messages (pygls.io_.run_async), and when it is an `initialize` request
this module can vouch for, it is answered at once with the very bytes our pygls server would write
(generated from that server: bootstrap_data.py, `python -m agentls.lsp.bootstrap_gen`). Then the
server proper is imported and started on the same stdin, the bytes read here handed to it first:
pygls handles that `initialize` as if it had read it itself (client capabilities, workspace,
settings), and its own answer, checked against the one sent, is dropped. Whatever arrives in the
meantime waits in the pipe and is read after it, in order.

Anything else as a first message (not JSON, not a request, not `initialize`, params lsprotocol
would refuse or this module does not know to be harmless) is left to pygls entirely: it answers
exactly as it always did, only later. The answer to `initialize` never depends on the settings
(a bad configuration is reported after it, see AgentServer.configure), so it can be given before
they are read.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, BinaryIO

# As pygls.io_.run_async.
CONTENT_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$")
# Deeper params than this are left to pygls: real clients nest a dozen levels, and a JSON text
# nested close to the recursion limit might parse here and not in pygls' deeper stack.
MAX_DEPTH = 200
ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
# textDocumentSync fields pygls derives from the client's
# text_document.synchronization capabilities: `client_value and server_has_the_feature`.
FROM_CLIENT_SYNC = ("willSave", "willSaveWaitUntil")


class EarlyAnswer:
    """The answer to `initialize` sent before pygls was loaded."""

    __slots__ = ("msg_id", "frame")

    def __init__(self, msg_id: int | str, frame: bytes) -> None:
        self.msg_id = msg_id
        self.frame = frame


def read_first_message(stdin: BinaryIO) -> tuple[bytes, bytes | None]:
    """The first message's body, read as pygls.io_.run_async reads one (header lines until a
    Content-Length and then a blank line, then the body), and every byte read to get it: the
    reader the server proper starts with reads those first. The body is None when the input
    ended first or the framing is one pygls itself would fail on: pygls then meets the same."""
    consumed: list[bytes] = []
    content_length = 0
    try:
        while True:
            header = stdin.readline()
            if not header:
                return b"".join(consumed), None
            consumed.append(header)
            if not content_length:
                match = CONTENT_LENGTH.fullmatch(header)
                if match:
                    content_length = int(match.group(1))
            if content_length and not header.strip():
                body = stdin.read(content_length)
                consumed.append(body)
                return b"".join(consumed), body or None
    except Exception:
        return b"".join(consumed), None


def early_answer(body: bytes) -> EarlyAnswer | None:
    """The answer our pygls server would give to this first message, when it is an `initialize`
    request whose answer is certain; None for anything else."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if type(message) is not dict or message.keys() != ENVELOPE_KEYS:
        return None
    msg_id = message["id"]
    params = message["params"]
    if (
        message["jsonrpc"] != "2.0"
        or message["method"] != "initialize"
        or type(msg_id) not in (int, str)
        or type(params) is not dict
    ):
        return None
    from agentls.lsp.bootstrap_data import DATA

    if not (
        plain_json(params)
        and valid(params, ["class", "InitializeParams"], DATA["classes"])
        and paths_ok(params)
        and agent_capabilities_ok(params["capabilities"], DATA["agentCapabilityKeys"])
    ):
        return None
    result = initialize_result(DATA, params["capabilities"])
    text = json.dumps({"id": msg_id, "jsonrpc": "2.0", "result": result})
    header = f"Content-Length: {len(text)}\r\nContent-Type: {DATA['contentType']}\r\n\r\n"
    return EarlyAnswer(msg_id, (header + text).encode("utf-8"))


def plain_json(params: dict[str, Any]) -> bool:
    """No object inside that pygls' JSON decoding would take for a message of its own (it looks
    at every object with a "jsonrpc" member), and not nested too deep."""
    stack: list[tuple[Any, int]] = [(params, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if type(value) is dict:
            if "jsonrpc" in value:
                return False
            stack.extend((v, depth + 1) for v in value.values())
        elif type(value) is list:
            stack.extend((v, depth + 1) for v in value)
    return True


def valid(value: Any, kind: Any, classes: dict[str, Any]) -> bool:
    """Whether value is of this type (bootstrap_gen's descriptions), strictly: exactly the JSON
    types lsprotocol's classes declare, enums' known values, integers in their validators'
    range, every required field. Stricter than lsprotocol's converter, never looser."""
    if type(kind) is str:
        if kind == "any":
            return True
        if kind == "null":
            return value is None
        if kind == "bool":
            return type(value) is bool
        if kind == "str":
            return type(value) is str
        if kind == "float":
            return type(value) in (int, float)
        return False  # "never", or a kind this version does not know
    tag = kind[0]
    if tag == "int":
        low, high = kind[1], kind[2]
        return (
            type(value) is int and (low is None or value >= low) and (high is None or value <= high)
        )
    if tag == "enum":
        return type(value) in (int, str) and value in kind[1]
    if tag == "list":
        return type(value) is list and all(valid(item, kind[1], classes) for item in value)
    if tag == "union":
        return any(valid(value, option, classes) for option in kind[1])
    if tag == "class":
        described = classes[kind[1]]
        fields = described["fields"]
        if type(value) is list:
            # lsprotocol's converter looks members up with `name in value`: an array is taken
            # for an object with none of them (Neovim 0.9 sends callHierarchy: [{...}]).
            return not described["required"] and not any(
                type(item) is str and item in fields for item in value
            )
        if type(value) is not dict or any(key not in value for key in described["required"]):
            return False
        # Members lsprotocol does not know are ignored by it.
        return all(key not in fields or valid(v, fields[key], classes) for key, v in value.items())
    return False


def _uri_ok(uri: str) -> bool:
    # What pygls (urllib.parse, the workspace) and AgentServer.configure (os.path.realpath) do
    # with it cannot fail: no NUL, no bracketed host to parse, nothing to normalize.
    return (
        uri.isascii() and "\0" not in uri and "%00" not in uri and not any(c in uri for c in "[]")
    )


def _path_ok(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    # pygls turns rootPath into a URI, and fails on "//host" with no slash after it.
    return "\0" not in path and not path.startswith("//")


def paths_ok(params: dict[str, Any]) -> bool:
    uris = [params.get("rootUri")] + [f["uri"] for f in params.get("workspaceFolders") or []]
    if any(uri is not None and not _uri_ok(uri) for uri in uris):
        return False
    root_path = params.get("rootPath")
    return root_path is None or _path_ok(root_path)


def member(value: Any, key: str) -> Any:
    """A member of a valid() object: None when absent, or when the object came as an array."""
    return value.get(key) if type(value) is dict else None


def agent_capabilities_ok(capabilities: Any, keys: list[str]) -> bool:
    """capabilities.experimental.agent as ClientAgentCapabilities takes it without an error."""
    agent = member(member(capabilities, "experimental"), "agent")
    if type(agent) is not dict:
        return True
    return all(type(agent[key]) is bool for key in keys if key in agent)


def initialize_result(data: dict[str, Any], capabilities: Any) -> dict[str, Any]:
    """The generated InitializeResult with what pygls derives from the client's capabilities."""
    template = data["result"]
    server_caps = dict(template["capabilities"])
    encodings = member(member(capabilities, "general"), "positionEncodings")
    chosen = data["defaultPositionEncoding"]
    for encoding in encodings or ():
        if encoding in data["positionEncodings"]:
            chosen = encoding
            break
    server_caps["positionEncoding"] = chosen
    client_sync = member(member(capabilities, "textDocument"), "synchronization")
    sync: dict[str, Any] = {}
    for key, value in server_caps["textDocumentSync"].items():
        if key in FROM_CLIENT_SYNC:
            client_value = member(client_sync, key)
            if client_value is None:
                continue  # pygls leaves the field out
            value = client_value and value
        sync[key] = value
    server_caps["textDocumentSync"] = sync
    return {**template, "capabilities": server_caps}


def serve() -> int:
    """`agentls serve`: answer `initialize` if it comes first and can be, then run the server."""
    try:
        consumed, body = read_first_message(sys.stdin.buffer)
        early = None
        if body is not None:
            try:
                early = early_answer(body)
            except Exception:  # the shortcut must never cost the answer: pygls gives it then
                early = None
        if early is not None:
            try:
                sys.stdout.buffer.write(early.frame)
                sys.stdout.buffer.flush()
            except OSError:
                early = None  # the client is gone; the server proper finds out as usual
        from agentls.lsp.server import serve as serve_lsp
    except KeyboardInterrupt:
        return 0
    return serve_lsp(consumed, early)
