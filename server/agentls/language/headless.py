"""HeadlessLanguages: the Languages a workspace has when agentls starts the language servers
itself (the CLI, ACP, editors that answer no agent/languageRequest), from the `languageServers`
setting. A server starts on the first request for a file it covers, is restarted once after it
dies, and every server stops with aclose().

A request waits until its server is ready (ServerProcess.wait_ready, bounded by the server's
timeout); when that wait runs out the answer is given as it is, and `loading_note()` says so for
the task that asked (the tools add it to what they show)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from agentls.config import LanguageServerConfig, Settings
from agentls.language.client import METHODS, Published, ReadText, ServerProcess
from agentls.language.commands import commands_offered, refusal
from agentls.language.errors import LanguageUnavailable
from agentls.language.positions import path_to_uri

# A server that died this many times is not started again (until the agent restarts).
MAX_STARTS = 2
# Said with an answer given before its server was ready.
STILL_LOADING = "the language server is still loading; results may be incomplete"
# Whether the last answer of this task came from a server still loading (a context variable: a
# request awaited in a tool's task sets it for that task only).
_loading: ContextVar[bool] = ContextVar("agentls_language_loading", default=False)
# How many folders are looked through for a file to open before a workspace/symbol.
_FIND_FILE_LIMIT = 200


def loading_note() -> str:
    """STILL_LOADING when the last answer this task got was given before its server was ready."""
    return STILL_LOADING if _loading.get() else ""


# What a server's command is run inside: the words before it (bubblewrap and its options: the
# bash sandbox with the workspace read-only), for the settings in force, the workspace root and
# the command (its program and script files stay visible);
# empty to run it as it is. Set once by the session layer (use_launcher), which owns the sandbox;
# raises LanguageUnavailable when the sandbox is required and cannot be had.
Launcher = Callable[[Settings, Path, Sequence[str]], Awaitable[Sequence[str]]]
_launcher: Launcher | None = None


def use_launcher(launcher: Launcher | None) -> None:
    """Run every headless language server started from now on inside `launcher`'s prefix."""
    global _launcher
    _launcher = launcher


class HeadlessLanguages:
    """Language servers agentls runs (see the module's docstring). `settings`: a getter of the
    settings in force; `read_text`: how a document's text is read (the workspace's, so unsaved
    text counts where there is such a thing)."""

    def __init__(
        self,
        root: Path,
        settings: Callable[[], Settings],
        read_text: ReadText,
    ) -> None:
        self.root = Path(root).resolve()
        self._settings = settings
        self._read_text = read_text
        self._servers: dict[str, ServerProcess] = {}
        self._starts: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False

    # ---- which server --------------------------------------------------------------------

    def _configs(self) -> dict[str, LanguageServerConfig]:
        return dict(self._settings().language_servers or {})

    def _name_for(self, path: Path) -> str | None:
        suffix = path.suffix.lower()
        for name, config in self._configs().items():
            if suffix and suffix in (e.lower() for e in config.extensions):
                return name
        return None

    def methods(self, path: Path | None) -> frozenset[str]:
        if path is None:
            return frozenset({"workspace/symbol"}) if self._configs() else frozenset()
        name = self._name_for(path)
        if name is None:
            return frozenset()
        server = self._servers.get(name)
        if server is None or not server.capabilities:
            return METHODS  # not started yet: what it offers is known once it has
        return frozenset(m for m in METHODS if server.answers(m))

    async def _server(self, name: str) -> ServerProcess:
        """The running server `name`, started (or restarted once after a crash) as needed."""
        if self._closed:
            raise LanguageUnavailable("the language servers were stopped (the agent closed).")
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            config = self._configs().get(name)
            if config is None:
                raise LanguageUnavailable(f"no language server named {name} is configured.")
            server = self._servers.get(name)
            if server is not None and server.alive() and server.config == config:
                return server
            if server is not None:
                await server.stop()
                if server.config == config:
                    if self._starts.get(name, 0) >= MAX_STARTS:
                        raise LanguageUnavailable(
                            f"{server.label} stopped again ({server.why_dead()}); it is not "
                            "restarted a second time. Fall back to grep and read."
                        )
                else:
                    self._starts[name] = 0  # new settings: a fresh start
            timeout = config.timeout_s or self._settings().language_timeout_s
            prefix = (
                await _launcher(self._settings(), self.root, config.command) if _launcher else ()
            )
            server = ServerProcess(name, config, self.root, timeout, self._read_text, prefix)
            self._servers[name] = server
            self._starts[name] = self._starts.get(name, 0) + 1
            try:
                await server.start()
            except LanguageUnavailable:
                await server.stop()
                raise
            except asyncio.CancelledError:
                # A start cut short (a cancelled turn) leaves no half-started server behind, nor
                # counts as a crash: the next request starts it afresh.
                self._servers.pop(name, None)
                self._starts[name] -= 1
                await asyncio.shield(server.stop())
                raise
            return server

    def _for(self, path: Path, method: str) -> str:
        name = self._name_for(path)
        if name is None:
            configured = ", ".join(
                f"{n} ({' '.join(c.extensions)})" for n, c in self._configs().items()
            )
            raise LanguageUnavailable(
                f"no language server for {path.suffix or path.name} files answers {method}: "
                + (
                    f"`languageServers` configures {configured}."
                    if configured
                    else 'the `languageServers` setting names none (e.g. {"python": '
                    '{"command": ["jedi-language-server"], "extensions": [".py"]}}).'
                )
            )
        return name

    # ---- Languages ------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any], path: Path | None) -> Any:
        if path is None:
            if method != "workspace/symbol":
                raise LanguageUnavailable(f"{method} needs a file.")
            return await self._workspace_symbols(params)
        name = self._for(path, method)
        server = await self._server(name)
        try:
            return await self._ask(server, method, params, path)
        except LanguageUnavailable:
            if server.alive() or self._closed:
                raise
        # It died under the request: once more, on a restarted server (when one is allowed).
        return await self._ask(await self._server(name), method, params, path)

    async def _ask(
        self, server: ServerProcess, method: str, params: dict[str, Any], path: Path
    ) -> Any:
        if not server.answers(method):
            raise LanguageUnavailable(f"{server.label} does not offer {method}.")
        await server.resync()
        version = await server.sync(path)
        if method == "textDocument/diagnostic" and not server.capabilities.get(
            "diagnosticProvider"
        ):
            published = await server.wait_diagnostics(path, version, server.timeout_s)
            return {"kind": "full", "items": published.items}
        if method == "textDocument/diagnostic":  # pulled: the server's answer for this text
            answer = await server.request(method, params)
            server.pulled()
            return answer
        if server.capabilities.get("diagnosticProvider") and not server.ready():
            # A server that is pulled from pushes nothing: its first pull is its readiness.
            pull = {"textDocument": {"uri": path_to_uri(path)}}
            with contextlib.suppress(LanguageUnavailable):
                await server.request("textDocument/diagnostic", pull)
                server.pulled()
        _loading.set(not await server.wait_ready(server.timeout_s))
        if method == "workspace/executeCommand":  # its edits captured, never applied
            command = str(params.get("command"))
            offered = commands_offered(server.capabilities)
            why = refusal(command, offered, bool(server.prefix), server.label)
            if why is not None:
                raise LanguageUnavailable(why)
            return await server.edits.run(lambda: server.request(method, params))
        return await server.request(method, params)

    async def _workspace_symbols(self, params: dict[str, Any]) -> Any:
        names = list(self._configs())
        if not names:
            raise LanguageUnavailable(
                "no language server answers workspace/symbol: the `languageServers` setting "
                "names none."
            )
        found: list[Any] = []
        errors: list[str] = []
        loading = False
        for name in names:
            try:
                server = await self._server(name)
                if not server.answers("workspace/symbol"):
                    errors.append(f"{server.label} does not offer workspace/symbol")
                    continue
                await server.resync()
                if not server.opened():  # a server reads its workspace once a file is open
                    first = self._a_file_of(name)
                    if first is not None:
                        await server.sync(first)
                loading = loading or not await server.wait_ready(server.timeout_s)
                found.extend(await server.request("workspace/symbol", params) or [])
            except LanguageUnavailable as exc:
                errors.append(str(exc))
        _loading.set(loading)
        if not found and errors:
            raise LanguageUnavailable("; ".join(errors))
        return found

    def _a_file_of(self, name: str) -> Path | None:
        """A file of the workspace the server `name` covers (hidden folders and node_modules
        skipped; a bounded walk)."""
        config = self._configs().get(name)
        suffixes = {e.lower() for e in config.extensions} if config is not None else set()
        for seen, (folder, dirs, files) in enumerate(os.walk(self.root)):
            if seen >= _FIND_FILE_LIMIT:
                break
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
            for file in sorted(files):
                if os.path.splitext(file)[1].lower() in suffixes:
                    return Path(folder) / file
        return None

    def diagnostics(self, path: Path) -> list[dict[str, Any]] | None:
        """The diagnostics last pushed for this file (None: none yet, or no server runs)."""
        name = self._name_for(path)
        server = self._servers.get(name) if name is not None else None
        published = server.diagnostics(path) if server is not None else None
        return published.items if published is not None else None

    async def wait_diagnostics(self, path: Path, timeout_s: float) -> list[dict[str, Any]]:
        """The file's current text synced, then the diagnostics the server pushes for it."""
        server = await self._server(self._for(path, "textDocument/publishDiagnostics"))
        version = await server.sync(path)
        published: Published = await server.wait_diagnostics(path, version, timeout_s)
        return published.items

    def pids(self) -> list[int]:
        """The process ids of the servers running now."""
        return [s.pid for s in self._servers.values() if s.pid is not None and s.alive()]

    async def aclose(self) -> None:
        self._closed = True
        servers = list(self._servers.values())
        self._servers.clear()
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)
