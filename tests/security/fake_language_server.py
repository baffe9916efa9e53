"""A hostile language server for tests/security: answers every request with what a JSON file (its
first argument, read again for each request) holds for its method; null for any other."""

from __future__ import annotations

import json
import sys
from typing import Any


def read() -> dict[str, Any]:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message: dict[str, Any] = json.loads(sys.stdin.buffer.read(length))
    return message


def send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


CAPS = {
    "textDocumentSync": 1,
    "renameProvider": True,
    "referencesProvider": True,
    "definitionProvider": True,
    "hoverProvider": True,
    "workspaceSymbolProvider": True,
    "documentSymbolProvider": True,
    "callHierarchyProvider": True,
    "codeActionProvider": True,
}
while True:
    msg = read()
    method, mid = msg.get("method"), msg.get("id")
    if method == "exit":
        sys.exit(0)
    if mid is None:
        continue
    if method == "initialize":
        result = {"capabilities": CAPS}
    else:
        with open(sys.argv[1]) as answers:
            result = json.load(answers).get(method)
    send({"jsonrpc": "2.0", "id": mid, "result": result})
