"""`agentls trust [DIR]`, `agentls trust --revoke [DIR]`, `agentls trust --list`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agentls.trust import TrustStore, TrustStoreError, enabled_by, mcp_json, workspace_config

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"agentls: {message}", file=sys.stderr)
    return code


def trust_command(args: argparse.Namespace) -> int:
    store = TrustStore()
    try:
        if args.list:
            return _list(store)
        raw = args.dir or os.getcwd()
        root = Path(raw)
        if not root.exists():
            return _fail(f"{raw}: no such directory")
        if not root.is_dir():
            return _fail(f"{raw}: not a directory")
        file = workspace_config(root)
        servers = mcp_json(root)
        if args.revoke:
            revoked = [f for f in (file, servers) if store.revoke(f)]
            for each in revoked:
                print(f"No longer trusted: {each}")
            if revoked:
                return EXIT_OK
            return _fail(f"{file} was not trusted (`agentls trust --list` lists what is)")
        if servers.is_file():
            code = _trust_mcp_json(store, servers)
            if code != EXIT_OK or not file.exists():
                return code
        return _trust(store, file)
    except TrustStoreError as exc:
        return _fail(str(exc), EXIT_FAILED)


def _trust(store: TrustStore, file: Path) -> int:
    from agentls.config import Settings, parse_json_object, read_workspace_bytes

    try:
        data = read_workspace_bytes(file)
        if data is None:
            return _fail(
                f"no {file} to trust (a workspace's settings live in .agentls/config.json)"
            )
        layer = parse_json_object(file, data)
    except ValueError as exc:
        return _fail(f"cannot trust it: {exc}")
    # Trusting a file that says something invalid would only trade one error for another.
    from pydantic import ValidationError

    try:
        Settings.model_validate(layer)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        return _fail(f"cannot trust {file}: {where}: {error['msg']}")
    except ValueError as exc:
        return _fail(f"cannot trust {file}: {exc}")
    previous = store.state(file, data)
    store.trust(file, data)
    lines = enabled_by(layer)
    again = " again (it changed since it was trusted)" if previous == "changed" else ""
    print(f"Trusted{again}: {file} (this exact content; an edit needs trusting again)")
    if lines:
        print("It enables:")
        for line in lines:
            print(f"  {line}")
    else:
        print("It enables nothing an untrusted workspace could not already do.")
    return EXIT_OK


def _trust_mcp_json(store: TrustStore, file: Path) -> int:
    """Trust the workspace's .mcp.json (its MCP servers then start in this workspace)."""
    from agentls.config import parse_json_object, read_workspace_bytes

    try:
        data = read_workspace_bytes(file)
        if data is None:
            return _fail(f"no {file} to trust")
        servers = parse_json_object(file, data).get("mcpServers") or {}
    except ValueError as exc:
        return _fail(f"cannot trust it: {exc}")
    if not isinstance(servers, dict):
        return _fail(f"cannot trust {file}: mcpServers: must be an object")
    store.trust(file, data)
    print(f"Trusted: {file} (this exact content; an edit needs trusting again)")
    for name, entry in servers.items():
        shown = "?"
        if isinstance(entry, dict):
            words = [str(entry.get("command", "?")), *map(str, entry.get("args") or [])]
            shown = str(entry.get("url") or " ".join(words))
        print(f"  MCP server {name}: {shown}")
    return EXIT_OK


def _list(store: TrustStore) -> int:
    from agentls.config import read_workspace_bytes

    records = store.records()
    if not records:
        print("No trusted workspace files.")
        return EXIT_OK
    print(f"Trusted workspace files ({store.path}):")
    for record in sorted(records.values(), key=lambda r: r.path):
        try:
            data = read_workspace_bytes(Path(record.path))
        except ValueError:
            data = None
        if data is None:
            note = "  (gone)"
        elif store.state(Path(record.path), data) != "trusted":
            note = "  (changed since: not trusted now)"
        else:
            note = ""
        print(f"  {record.path}  since {record.trusted_at}{note}")
    return EXIT_OK
