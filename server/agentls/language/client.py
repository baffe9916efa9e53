"""One language server agentls runs itself, spoken to with pygls' JSON-RPC client: started in its
own process group in the workspace root, initialized, its documents opened and kept in sync,
its pushed diagnostics collected, every request bounded by a timeout, and stopped with shutdown
and exit, then killed.

pygls is imported only when a server starts: nothing else below the front ends needs it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.config import LanguageServerConfig
from agentls.environ_scrub import child_environment
from agentls.language.errors import LanguageUnavailable
from agentls.language.positions import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from pygls.client import JsonRPCClient

ReadText = Callable[[Path], Awaitable[str]]

# Which server capability answers which method (the methods).
CAPABILITY = {
    "textDocument/definition": "definitionProvider",
    "textDocument/typeDefinition": "typeDefinitionProvider",
    "textDocument/implementation": "implementationProvider",
    "textDocument/references": "referencesProvider",
    "textDocument/hover": "hoverProvider",
    "textDocument/documentSymbol": "documentSymbolProvider",
    "workspace/symbol": "workspaceSymbolProvider",
    "textDocument/prepareRename": "renameProvider",
    "textDocument/rename": "renameProvider",
    "textDocument/prepareCallHierarchy": "callHierarchyProvider",
    "callHierarchy/incomingCalls": "callHierarchyProvider",
    "callHierarchy/outgoingCalls": "callHierarchyProvider",
    "textDocument/diagnostic": "diagnosticProvider",
}
METHODS = frozenset(CAPABILITY)
STDERR_LINES = 20  # kept to say why a server died
STOP_GRACE_S = 2.0

LANGUAGE_IDS = {".py": "python", ".pyi": "python", ".ts": "typescript", ".js": "javascript"}


def _client_env() -> dict[str, str]:
    """The server's environment: this process's, without the API credentials and settings."""
    return child_environment()


def _plain_converter() -> Any:
    """pygls' converter, except that params and results stay plain JSON (pygls' own turns unknown
    ones into namedtuples)."""
    from pygls.protocol import (
        JsonRPCNotification,
        JsonRPCRequestMessage,
        JsonRPCResponseMessage,
        default_converter,
    )

    converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, kind: kind(**obj))
    return converter


@dataclass
class _Document:
    version: int
    text: str


@dataclass
class Published:
    """A publishDiagnostics of one document: its version (None: the server sent none) and items."""

    version: int | None
    items: list[dict[str, Any]]


class ServerProcess:
    """One running language server (see the module's docstring)."""

    def __init__(
        self,
        name: str,
        config: LanguageServerConfig,
        root: Path,
        timeout_s: float,
        read_text: ReadText,
        prefix: Sequence[str] = (),
    ) -> None:
        self.name = name
        # What the command runs inside (the sandbox's bubblewrap words; see headless.Launcher).
        self.prefix = tuple(prefix)
        self.config = config
        self.root = root
        self.timeout_s = timeout_s
        self._read_text = read_text
        self._client: JsonRPCClient | None = None
        self._process: asyncio.subprocess.Process | None = None
        self.capabilities: dict[str, Any] = {}
        self._documents: dict[str, _Document] = {}
        self._published: dict[str, Published] = {}
        self._changed = asyncio.Condition()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._tasks: list[asyncio.Task[None]] = []
        self._notifying: set[asyncio.Task[None]] = set()
        # What had been published for a document when its text was last sent (a server that
        # sends no version: the next publish is the one for that text).
        self._sent_after: dict[str, Published | None] = {}

    @property
    def label(self) -> str:
        return f"the {self.name} language server ({self.config.command[0]})"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def alive(self) -> bool:
        return self._process is not None and self._process.returncode is None

    def why_dead(self) -> str:
        code = self._process.returncode if self._process is not None else None
        said = " | ".join(line for line in self._stderr if line.strip())[-400:]
        return f"it exited with code {code}" + (f" ({said})" if said else "")

    # ---- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        from pygls.client import JsonRPCClient

        client = JsonRPCClient(converter_factory=_plain_converter)
        self._register(client)
        command = [*self.prefix, *self.config.command]
        try:
            await client.start_io(
                command[0],
                *command[1:],
                cwd=str(self.root),
                env=_client_env(),
                start_new_session=True,
            )
        except OSError as exc:
            raise LanguageUnavailable(
                f"{self.label} could not be started: {exc.strerror or exc}. Check the "
                "`languageServers` setting's command."
            ) from None
        self._client = client
        self._process = client._server
        if self._process is not None and self._process.stderr is not None:
            self._tasks.append(asyncio.create_task(self._drain(self._process.stderr)))
        result = await self.request(
            "initialize",
            {
                # In the sandbox's own process tree this process's id names another or none: a
                # server watching it would exit (bubblewrap stops it with agentls instead).
                "processId": None if self.prefix else os.getpid(),
                "clientInfo": {"name": "agentls"},
                "rootUri": path_to_uri(self.root),
                "rootPath": str(self.root),
                "workspaceFolders": [{"uri": path_to_uri(self.root), "name": self.root.name}],
                "initializationOptions": self.config.initialization_options,
                "capabilities": _CLIENT_CAPABILITIES,
            },
        )
        caps = result.get("capabilities") if isinstance(result, dict) else None
        self.capabilities = caps if isinstance(caps, dict) else {}
        client.protocol.notify("initialized", {})

    def _register(self, client: JsonRPCClient) -> None:
        def diagnostics(params: dict[str, Any]) -> None:
            uri = params.get("uri")
            items = params.get("diagnostics")
            if isinstance(uri, str) and isinstance(items, list):
                version = params.get("version")
                self._published[uri] = Published(
                    version if isinstance(version, int) else None, items
                )
                task = asyncio.get_running_loop().create_task(self._notify_changed())
                self._notifying.add(task)
                task.add_done_callback(self._notifying.discard)

        def configuration(params: dict[str, Any]) -> list[None]:
            items = params.get("items")
            return [None for _ in items] if isinstance(items, list) else []

        def nothing(params: Any) -> None:
            return None

        def refuse_edit(params: Any) -> dict[str, Any]:
            return {"applied": False, "failureReason": "agentls applies edits itself"}

        client.feature("textDocument/publishDiagnostics")(diagnostics)
        client.feature("workspace/configuration")(configuration)
        client.feature("workspace/applyEdit")(refuse_edit)
        for method in (
            "client/registerCapability",
            "client/unregisterCapability",
            "window/workDoneProgress/create",
            "window/showMessageRequest",
            "window/showMessage",
            "window/logMessage",
            "$/progress",
            "telemetry/event",
            "workspace/diagnostic/refresh",
            "workspace/semanticTokens/refresh",
            "workspace/inlayHint/refresh",
            "workspace/codeLens/refresh",
        ):
            client.feature(method)(nothing)

    async def _notify_changed(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        """Reads stderr to the end (a full pipe would stall the server), keeping its last lines."""
        with contextlib.suppress(Exception):
            while line := await stream.readline():
                self._stderr.append(line.decode("utf-8", "replace").rstrip())

    async def stop(self) -> None:
        """shutdown and exit, then SIGTERM and SIGKILL the server's process group."""
        client, process = self._client, self._process
        if client is None or process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    client.protocol.send_request_async("shutdown", None), STOP_GRACE_S
                )
                client.protocol.notify("exit", None)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), STOP_GRACE_S)
        # The whole group: whatever the server started goes with it.
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            if sig == signal.SIGTERM and process.returncode is None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(process.wait(), STOP_GRACE_S)
        await process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.stop(), STOP_GRACE_S)  # type: ignore[no-untyped-call]
        for task in self._tasks:
            task.cancel()
        self._client = None

    # ---- requests --------------------------------------------------------------------------

    def answers(self, method: str) -> bool:
        """Whether the server offers `method` (diagnostics: pulled, or else the pushed ones)."""
        if method == "textDocument/diagnostic":
            return True
        capability = self.capabilities.get(CAPABILITY.get(method, ""))
        if method == "textDocument/prepareRename":
            return isinstance(capability, dict) and bool(capability.get("prepareProvider"))
        return capability not in (None, False)

    async def request(self, method: str, params: Any) -> Any:
        client = self._client
        if client is None or not self.alive():
            raise LanguageUnavailable(f"{self.label} is not running: {self.why_dead()}.")
        msg_id = uuid.uuid4().hex
        future = client.protocol.send_request_async(method, params, msg_id=msg_id)
        try:
            return await asyncio.wait_for(future, self.timeout_s)
        except TimeoutError:
            with contextlib.suppress(Exception):
                client.protocol.notify("$/cancelRequest", {"id": msg_id})
            raise LanguageUnavailable(
                f"{self.label} did not answer {method} within {self.timeout_s:g} s (it may still "
                "be indexing; try again, or raise `languageTimeoutS`)."
            ) from None
        except RuntimeError as exc:  # pygls: the server process exited
            raise LanguageUnavailable(f"{self.label} stopped: {self.why_dead()}.") from exc
        except Exception as exc:  # a JSON-RPC error answer
            message = getattr(exc, "message", None) or str(exc) or exc.__class__.__name__
            raise LanguageUnavailable(f"{self.label} failed on {method}: {message}") from None

    # ---- documents -------------------------------------------------------------------------

    async def sync(self, path: Path) -> int:
        """Open the document (or send its new text when it changed since); its version."""
        client = self._client
        if client is None:
            raise LanguageUnavailable(f"{self.label} is not running.")
        uri = path_to_uri(path)
        try:
            text = await self._read_text(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise LanguageUnavailable(f"{path.name} cannot be read as text: {exc}") from None
        doc = self._documents.get(uri)
        if doc is None or doc.text != text:
            self._sent_after[uri] = self._published.get(uri)
        if doc is None:
            doc = self._documents[uri] = _Document(1, text)
            language = LANGUAGE_IDS.get(path.suffix, self.name)
            client.protocol.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
            )
        elif doc.text != text:
            doc.version += 1
            doc.text = text
            client.protocol.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": doc.version},
                    "contentChanges": [{"text": text}],
                },
            )
        return doc.version

    async def resync(self) -> None:
        """Every open document brought up to date (a write since may have changed any)."""
        for uri in list(self._documents):
            path = uri_to_path(uri)
            if path is not None:
                with contextlib.suppress(LanguageUnavailable):
                    await self.sync(path)

    def diagnostics(self, path: Path) -> Published | None:
        return self._published.get(path_to_uri(path))

    async def wait_diagnostics(self, path: Path, version: int, timeout_s: float) -> Published:
        """The diagnostics the server pushed for this version of the document (or a later one;
        any after it was synced, for a server that sends no version)."""
        uri = path_to_uri(path)

        def ready() -> bool:
            now = self._published.get(uri)
            if now is None:
                return False
            if now.version is None:
                return now is not self._sent_after.get(uri)
            return now.version >= version

        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(ready), timeout_s)
            except TimeoutError:
                raise LanguageUnavailable(
                    f"{self.label} published no diagnostics for {path.name} within {timeout_s:g} s."
                ) from None
        published = self._published[uri]
        return published


_CLIENT_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "workspace": {"workspaceFolders": True, "configuration": True, "symbol": {}},
    "textDocument": {
        "synchronization": {"didSave": False},
        "definition": {"linkSupport": False},
        "typeDefinition": {"linkSupport": False},
        "implementation": {"linkSupport": False},
        "references": {},
        "hover": {"contentFormat": ["plaintext", "markdown"]},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "rename": {"prepareSupport": True},
        "callHierarchy": {},
        "publishDiagnostics": {"versionSupport": True},
        "diagnostic": {},
    },
}
