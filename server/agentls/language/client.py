"""One language server agentls runs itself, spoken to with pygls' JSON-RPC client: started in its
own process group in the workspace root, initialized, its documents opened and kept in sync,
its pushed diagnostics collected, every request bounded by a timeout, and stopped with shutdown
and exit, then killed.

Ready before it answers: a server still loading the workspace answers from what it has read so far
(pyright's first `references` finds the open file's only). The client declares
`window.workDoneProgress`, and a server counts as ready once it has published diagnostics (for the
document opened first: it has read the workspace to check it), or answered a pull, and none of the
work it announced (`window/workDoneProgress/create`, then `$/progress` begin ... end) is still
running; the wait is bounded (wait_ready). A server that announces nothing and publishes nothing
for QUIET_S counts as ready (pyright is always waited for: it publishes once loaded). A request
the server cancels itself (ContentModified, ServerCancelled, RequestCancelled without our asking)
is sent again. Notifications of no known method (`pyright/beginProgress`) are ignored silently.

pygls is imported only when a server starts: nothing else below the front ends needs it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.config import LanguageServerConfig
from agentls.environ_scrub import child_environment
from agentls.language.commands import EditCapture
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
    "textDocument/codeAction": "codeActionProvider",
    "codeAction/resolve": "codeActionProvider",
    "workspace/executeCommand": "executeCommandProvider",
}
METHODS = frozenset(CAPABILITY)
STDERR_LINES = 20  # kept to say why a server died
STOP_GRACE_S = 2.0
# The error codes of a request the server gave up itself (the document changed under it, or it
# chose to): asked again, up to CANCELLED_RETRIES times, after a short pause.
CANCELLED = {-32800: "request cancelled", -32801: "content modified", -32802: "server cancelled"}
CANCELLED_RETRIES = 3
CANCELLED_PAUSE_S = 0.1
# How long a document's diagnostics published before another document's change are held stale,
# waiting for the server to publish them again (pyright does: a changed signature breaks a
# caller); a server that did not, once, and was never seen doing it, is not waited for again
# (jedi publishes a document's own only when it changes).
FRESH_WAIT_S = 1.5
# A server that, this long after its first document was opened, has announced no work and
# published no diagnostics counts as ready (it may publish none at all). Not for the servers known
# to publish an open file's diagnostics once they have loaded the workspace: they are waited for.
QUIET_S = 3.0
PUBLISH_WHEN_LOADED = ("pyright",)  # pyright-langserver, basedpyright-langserver

LANGUAGE_IDS = {".py": "python", ".pyi": "python", ".ts": "typescript", ".js": "javascript"}


def _client_env() -> dict[str, str]:
    """The server's environment: this process's, without the API credentials and settings."""
    return child_environment()


def _protocol_class() -> Any:
    """pygls' JSON-RPC protocol, except that a notification of no known method is dropped
    silently (pygls logs a warning, which ends up on the user's stderr)."""
    from pygls.protocol import JsonRPCProtocol

    class QuietProtocol(JsonRPCProtocol):
        def _handle_notification(self, method_name: str, params: Any) -> None:
            known = self.fm.builtin_features.keys() | self.fm.features.keys()
            if method_name == "$/cancelRequest" or method_name in known:
                super()._handle_notification(method_name, params)

    return QuietProtocol


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
    """A publishDiagnostics of one document: its version (None: the server sent none) and items;
    `changes`: how many document changes had been sent when it came (ServerProcess.changes)."""

    version: int | None
    items: list[dict[str, Any]]
    changes: int = 0


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
        # How many changed texts were sent (didChange): a document's diagnostics published
        # before the latest change of ANY document may be stale (a changed signature elsewhere).
        self.changes = 0
        self._republishes = True  # until a wait for a fresh publish ran out
        self._republished = False  # seen: a document's published again after another's change
        # Readiness: the work the server announced and has not ended ($/progress tokens), whether
        # it has published diagnostics yet, and whether it was found ready (or the wait ran out).
        self._working: set[str | int] = set()
        self._diagnosed = False
        self._ready = False
        self._waited_out = False
        self._announced = False  # some work was announced ($/progress begin)
        self._opened_at: float | None = None  # when the first document was opened
        self.edits = EditCapture()  # workspace/applyEdit: captured while a command runs
        words = [Path(word).name for word in config.command]
        self._publishes_when_loaded = any(n in w for w in words for n in PUBLISH_WHEN_LOADED)

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

        client = JsonRPCClient(protocol_cls=_protocol_class(), converter_factory=_plain_converter)
        self._register(client)
        command = [*self.prefix, *self.config.command]
        program = self.config.command[0]
        if self.prefix and shutil.which(program, path=_client_env().get("PATH")) is None:
            # In the sandbox bwrap would start and then fail to find it: said as unsandboxed.
            raise LanguageUnavailable(
                f"{self.label} could not be started: {program} was not found. Check the "
                "`languageServers` setting's command."
            )
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
                before = self._published.get(uri)
                if (
                    before is not None
                    and before.changes < self.changes
                    and before.version is not None
                    and before.version == version
                ):
                    self._republished = True
                self._published[uri] = Published(
                    version if isinstance(version, int) else None, items, self.changes
                )
                self._diagnosed = True
                self._changed_soon()

        def progress(params: dict[str, Any]) -> None:
            value = params.get("value") if isinstance(params, dict) else None
            token = params.get("token") if isinstance(params, dict) else None
            if not isinstance(value, dict) or not isinstance(token, str | int):
                return
            if value.get("kind") == "begin":
                self._working.add(token)
                self._announced = True
            elif value.get("kind") == "end":
                self._working.discard(token)
                self._changed_soon()

        def configuration(params: dict[str, Any]) -> list[None]:
            items = params.get("items")
            return [None for _ in items] if isinstance(items, list) else []

        def nothing(params: Any) -> None:
            return None

        client.feature("textDocument/publishDiagnostics")(diagnostics)
        client.feature("workspace/configuration")(configuration)
        client.feature("workspace/applyEdit")(lambda params: self.edits.handle(params))
        client.feature("$/progress")(progress)
        for method in (
            "client/registerCapability",
            "client/unregisterCapability",
            "window/workDoneProgress/create",  # the token's work is followed by `progress`
            "window/showMessageRequest",
            "window/showMessage",
            "window/logMessage",
            "telemetry/event",
            "workspace/diagnostic/refresh",
            "workspace/semanticTokens/refresh",
            "workspace/inlayHint/refresh",
            "workspace/codeLens/refresh",
        ):
            client.feature(method)(nothing)

    def _changed_soon(self) -> None:
        task = asyncio.get_running_loop().create_task(self._notify_changed())
        self._notifying.add(task)
        task.add_done_callback(self._notifying.discard)

    async def _notify_changed(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def pulled(self) -> None:
        """The server answered a diagnostics pull: it has read what checking a file needs."""
        if not self._diagnosed:
            self._diagnosed = True
            self._changed_soon()

    def ready(self) -> bool:
        """Whether the server was found ready (wait_ready)."""
        return self._ready

    def _settled(self) -> bool:
        return self._diagnosed and not self._working

    def _quiet_since(self) -> float | None:
        """When a server that says nothing counts as ready: QUIET_S after its first document was
        opened, unless it announced work or is known to publish once loaded (None)."""
        if self._opened_at is None or self._announced or self._publishes_when_loaded:
            return None
        return self._opened_at + QUIET_S

    async def wait_ready(self, timeout_s: float) -> bool:
        """Whether the server has done its initial work (see the module's docstring), waiting
        up to `timeout_s` the first time. Once that wait has run out, the server counts as still
        loading while it reports work in progress."""
        if self._ready:
            return True
        if self._waited_out:
            self._ready = self._settled()
            return self._ready or not self._working
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        async with self._changed:
            while not self._settled():
                now, quiet = loop.time(), self._quiet_since()
                if quiet is not None and now >= quiet:
                    break  # it announced nothing and published nothing: it has nothing to load
                if now >= deadline:
                    self._waited_out = True
                    return False
                until = min(deadline, quiet) if quiet is not None else deadline
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), until - now)
        self._ready = True
        return True

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
        if method == "codeAction/resolve":
            return isinstance(capability, dict) and bool(capability.get("resolveProvider"))
        return capability not in (None, False)

    async def request(self, method: str, params: Any) -> Any:
        """The server's answer; a request it cancelled itself is sent again (CANCELLED)."""
        for attempt in range(CANCELLED_RETRIES + 1):
            try:
                return await self._request_once(method, params)
            except _Cancelled as exc:
                if attempt == CANCELLED_RETRIES:
                    raise LanguageUnavailable(
                        f"{self.label} cancelled {method} {attempt + 1} times ({exc}); it may "
                        "still be loading: try again."
                    ) from None
                await asyncio.sleep(CANCELLED_PAUSE_S * (attempt + 1))
        raise AssertionError("unreachable")

    async def _request_once(self, method: str, params: Any) -> Any:
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
            code = getattr(exc, "code", None)
            if code in CANCELLED:
                raise _Cancelled(CANCELLED[code]) from None
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
            if self._opened_at is None:
                self._opened_at = asyncio.get_running_loop().time()
            doc = self._documents[uri] = _Document(1, text)
            language = LANGUAGE_IDS.get(path.suffix, self.name)
            client.protocol.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}},
            )
        elif doc.text != text:
            doc.version += 1
            doc.text = text
            self.changes += 1
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

    def opened(self) -> bool:
        """Whether any document is open in the server."""
        return bool(self._documents)

    def diagnostics(self, path: Path) -> Published | None:
        return self._published.get(path_to_uri(path))

    async def wait_diagnostics(self, path: Path, version: int, timeout_s: float) -> Published:
        """The diagnostics the server pushed for this version of the document (or a later one;
        any after it was synced, for a server that sends no version), published after the last
        change of any other document was sent (a dependent file's errors come from that)."""
        uri = path_to_uri(path)

        def ready() -> bool:
            now = self._published.get(uri)
            if now is None:
                return False
            if now.version is None:
                return now is not self._sent_after.get(uri)
            return now.version >= version

        def fresh() -> bool:
            now = self._published.get(uri)
            return ready() and now is not None and now.changes >= self.changes

        async with self._changed:
            if self._republishes and not fresh():
                try:
                    await asyncio.wait_for(
                        self._changed.wait_for(fresh), min(FRESH_WAIT_S, timeout_s)
                    )
                    return self._published[uri]
                except TimeoutError:
                    # Its own text's diagnostics are in; others' changes brought none again.
                    self._republishes = self._republished or not ready()
            try:
                await asyncio.wait_for(self._changed.wait_for(ready), timeout_s)
            except TimeoutError:
                raise LanguageUnavailable(
                    f"{self.label} published no diagnostics for {path.name} within {timeout_s:g} s."
                ) from None
        published = self._published[uri]
        return published


class _Cancelled(Exception):
    """The server answered a request with one of the CANCELLED codes."""


_CLIENT_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    # Servers report their loading and indexing as $/progress (what wait_ready waits for).
    "window": {"workDoneProgress": True},
    "workspace": {
        "workspaceFolders": True,
        "configuration": True,
        "symbol": {},
        # Edits a command sends back are captured, never applied (language/commands.py).
        "applyEdit": True,
        "workspaceEdit": {"documentChanges": True},
        "executeCommand": {},
    },
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
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {
                    "valueSet": [
                        "",
                        "quickfix",
                        "refactor",
                        "refactor.extract",
                        "refactor.inline",
                        "refactor.rewrite",
                        "source",
                        "source.organizeImports",
                        "source.fixAll",
                    ]
                }
            },
            "isPreferredSupport": True,
            "disabledSupport": True,
            "dataSupport": True,
            "resolveSupport": {"properties": ["edit"]},
        },
    },
}
