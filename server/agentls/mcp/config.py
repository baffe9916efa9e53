"""MCP server configuration in Claude Code's shape, so users can paste what they have:

    {"mcpServers": {
        "fs":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                "env": {"TOKEN": "${MY_TOKEN}"}, "cwd": "tools", "timeout": 30000},
        "api": {"type": "http", "url": "https://example.com/mcp",
                "headers": {"Authorization": "Bearer ${API_TOKEN}"}}}}

`${VAR}` (and `${VAR:-default}`) in env values, headers and the url come from agentls's own
environment, so secrets stay out of files. `timeout` is how long the server may take to start, in
milliseconds. A bad entry is an error for that server only: the others still start.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# How long a server may take to start (process up, initialize answered, tools listed).
DEFAULT_START_TIMEOUT_S = 30.0
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigError(ValueError):
    """One server's entry is unusable; the message names the server and the field."""


@dataclass(frozen=True)
class StdioServer:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S

    @property
    def transport(self) -> str:
        return "stdio"

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


@dataclass(frozen=True)
class HttpServer:
    name: str
    url: str
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S

    @property
    def transport(self) -> str:
        return "http"

    def describe(self) -> str:
        return self.url


ServerConfig = StdioServer | HttpServer


def expand(value: str, where: str, environ: Mapping[str, str] | None = None) -> str:
    """`${VAR}` and `${VAR:-default}` replaced from the environment; a variable that is not set
    (and has no default) is a ConfigError naming it and `where`."""
    env = os.environ if environ is None else environ

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = env.get(name)
        if found is not None:
            return found
        if default is not None:
            return default
        raise ConfigError(f"{where}: ${{{name}}} is not set in agentls's environment")

    return _VAR.sub(one, value)


def _strings(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ConfigError(f"{where}: must be an object of strings")
    return dict(value)


def _timeout(entry: dict[str, Any], where: str) -> float:
    raw = entry.get("timeout")
    if raw is None:
        return DEFAULT_START_TIMEOUT_S
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
        raise ConfigError(f"{where}.timeout: must be a positive number of milliseconds")
    return float(raw) / 1000


def parse_server(
    name: str,
    entry: Any,
    *,
    root: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServerConfig:
    """One `mcpServers` entry; raises ConfigError naming the server and the field."""
    where = f"mcpServers.{name}"
    if not name or not isinstance(entry, dict):
        raise ConfigError(f"{where}: must be an object")
    kind = entry.get("type", "stdio" if "command" in entry else None)
    timeout = _timeout(entry, where)
    if kind in ("http", "streamable-http", "streamableHttp"):
        url = entry.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.url: must be an http:// or https:// URL")
        headers = {
            key: expand(value, f"{where}.headers.{key}", environ)
            for key, value in _strings(entry.get("headers"), f"{where}.headers").items()
        }
        return HttpServer(
            name=name,
            url=expand(url, f"{where}.url", environ),
            headers=tuple(headers.items()),
            start_timeout_s=timeout,
        )
    if kind == "sse":
        raise ConfigError(f"{where}.type: sse is not supported; use the server's http endpoint")
    if kind != "stdio":
        raise ConfigError(f'{where}: needs "command" (stdio) or "type": "http" with "url"')
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}.command: must be a non-empty string")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{where}.args: must be a list of strings")
    env = {
        key: expand(value, f"{where}.env.{key}", environ)
        for key, value in _strings(entry.get("env"), f"{where}.env").items()
    }
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ConfigError(f"{where}.cwd: must be a string")
    if cwd is not None and root is not None:
        cwd = str(root / os.path.expanduser(cwd))
    elif cwd is None and root is not None:
        cwd = str(root)
    return StdioServer(
        name=name,
        command=command,
        args=tuple(args),
        env=tuple(env.items()),
        cwd=cwd,
        start_timeout_s=timeout,
    )


@dataclass
class ParsedServers:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    # Entries that could not be used: name -> the error.
    errors: dict[str, str] = field(default_factory=dict)


def parse_servers(
    raw: Any, *, root: Path | None = None, environ: Mapping[str, str] | None = None
) -> ParsedServers:
    """The `mcpServers` object: each entry parsed on its own (a bad one is an error for it)."""
    out = ParsedServers()
    if raw is None:
        return out
    if not isinstance(raw, dict):
        out.errors["mcpServers"] = "mcpServers: must be an object {name: server}"
        return out
    for name, entry in raw.items():
        try:
            out.servers[name] = parse_server(name, entry, root=root, environ=environ)
        except ConfigError as exc:
            out.errors[name] = str(exc)
    return out


def from_acp(servers: list[Any]) -> dict[str, Any]:
    """ACP session/new `mcpServers` (a list: {name, command, args, env: [{name, value}]} or
    {type: "http", name, url, headers: [{name, value}]}) in the `mcpServers` shape above."""
    out: dict[str, Any] = {}
    for item in servers:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ConfigError("mcpServers: each ACP server needs a name")

        def pairs(key: str, item: dict[str, Any] = item) -> dict[str, Any]:
            return {
                str(p.get("name")): p.get("value")
                for p in item.get(key) or []
                if isinstance(p, dict)
            }

        if item.get("type") in ("http", "sse"):
            out[item["name"]] = {
                "type": item["type"],
                "url": item.get("url"),
                "headers": pairs("headers"),
            }
        else:
            out[item["name"]] = {
                "command": item.get("command"),
                "args": item.get("args") or [],
                "env": pairs("env"),
            }
    return out
