"""A client of `agentls serve`: the agent/* requests and events over LSP, on pygls' LanguageClient.

The one client of our own protocol, shared by the demo (agentls.demo.client), the benchmarks
(bench/lsp_client.py) and the tests' editor (tests/lsp/editor.py); each adds its own layer (a
transcript, timings, buffers). It starts the server (or talks to a started pygls client), keeps the
agent/event notifications and can wait for one, answers permission requests with `agent/approve`
"once" when told to, stamps each message with the time it was read, and can apply a workspace edit
to the files on disk (an editor with no open buffers).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import MethodTypeNotRegisteredError
from pygls.lsp import get_method_params_type
from pygls.lsp.client import LanguageClient
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)
from pygls.protocol import default_converter as pygls_default_converter
from pygls.uris import from_fs_path, to_fs_path

from agentls import __version__
from agentls.lsp.textedit import apply_text_edits

REQUEST_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def serve_command() -> list[str]:
    """`agentls serve` with this interpreter."""
    return [sys.executable, "-m", "agentls.cli.main", "serve"]


def converter() -> Any:
    """pygls' converter, except that agent/* messages keep their params and results as plain JSON
    objects (pygls would make namedtuples of them), and a Command is told from a CodeAction the way
    the spec does (lsprotocol takes any object with a "command" key for a Command)."""
    conv = pygls_default_converter()  # type: ignore[no-untyped-call]

    def keep(obj: dict[str, Any], cls: type) -> Any:
        return cls(**obj)

    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, keep)

    def code_action_or_command(obj: Any, _: type) -> Any:
        if isinstance(obj.get("command"), str):
            return conv.structure(obj, types.Command)
        return conv.structure(obj, types.CodeAction)

    conv.register_structure_hook(types.Command | types.CodeAction, code_action_or_command)
    return conv


class StampingProtocol(LanguageServerProtocol):
    """Notes when each message from the server was read (time.time()), before its handler runs."""

    arrived_at: float = 0.0

    def handle_message(self, message: Any) -> None:
        self.arrived_at = time.time()
        super().handle_message(message)


def agent_capabilities(
    *,
    approvals: bool = True,
    diagnostics_push: bool = False,
    saves_edits: bool = False,
    apply_edit: bool = True,
    document_changes: bool = True,
    resource_operations: Sequence[str] = ("create",),
    work_done_progress: bool | None = None,
    configuration: bool | None = None,
    change_annotations: bool = False,
) -> types.ClientCapabilities:
    """What a client declares: workspace edits and the agent's experimental capabilities."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=apply_edit,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=document_changes,
                resource_operations=[types.ResourceOperationKind(op) for op in resource_operations],
                change_annotation_support=types.ChangeAnnotationsSupportOptions(
                    groups_on_label=True
                )
                if change_annotations
                else None,
            ),
            configuration=configuration,
        ),
        window=None
        if work_done_progress is None
        else types.WindowClientCapabilities(work_done_progress=work_done_progress),
        experimental={
            "agent": {
                "approvals": approvals,
                "diagnosticsPush": diagnostics_push,
                "savesEdits": saves_edits,
            }
        },
    )


def apply_workspace_edit(edit: types.WorkspaceEdit, encoding: str = "utf-16") -> list[Path]:
    """Apply a WorkspaceEdit to the files on disk (an editor with no open buffers); returns the
    files changed. Raises ValueError for what such an editor does not do (delete, rename, snippets).
    """
    changed: list[Path] = []

    def path_of(uri: str) -> Path:
        fs_path = to_fs_path(uri)
        if not fs_path:
            raise ValueError(f"not a file URI: {uri}")
        return Path(fs_path)

    def edit_file(uri: str, edits: list[types.TextEdit]) -> None:
        path = path_of(uri)
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(apply_text_edits(text, edits, encoding))
        changed.append(path)

    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = path_of(change.uri)
            options = change.options
            if path.exists():
                if options is not None and options.ignore_if_exists:
                    continue
                if options is None or not options.overwrite:
                    raise ValueError(f"{path} already exists")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
            changed.append(path)
        elif isinstance(change, types.TextDocumentEdit):
            text_edits = [
                types.TextEdit(range=e.range, new_text=e.new_text)
                for e in change.edits
                if isinstance(e, types.TextEdit | types.AnnotatedTextEdit)
            ]
            if len(text_edits) != len(change.edits):
                raise ValueError("this editor does not do snippet edits")
            edit_file(change.text_document.uri, text_edits)
        else:
            raise ValueError(f"this editor does not do {type(change).__name__}")
    for uri, edits in (edit.changes or {}).items():
        edit_file(uri, list(edits))
    return changed


class AgentClient:
    """agent/* over LSP. `client` is a pygls LanguageClient (made here when not given): start() runs
    `agentls serve` on it, or it was started elsewhere (pytest-lsp)."""

    def __init__(
        self,
        client: LanguageClient | None = None,
        *,
        auto_approve: bool = True,
        record_events: bool = True,
    ) -> None:
        self.client = client or LanguageClient(
            "agentls-client",
            __version__,
            protocol_cls=StampingProtocol,
            converter_factory=converter,
        )
        self.auto_approve = auto_approve
        self.record_events = record_events
        self.events: list[dict[str, Any]] = []
        self.encoding = "utf-16"
        self.server_stderr: deque[str] = deque(maxlen=40)
        self._signal = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()

        def on_agent_event(params: Any) -> None:  # pygls marks the function it registers
            self._on_agent_event(params)

        self.client.feature("agent/event")(on_agent_event)

    # ---- events -------------------------------------------------------------------------

    def _on_agent_event(self, params: Any) -> None:
        event = dict(params)
        if self.record_events:
            self.events.append(event)
        self._signal.set()
        self.on_event(event)
        if event.get("type") == "permission-request" and self.approves(event):
            approve = {
                "sessionId": event["sessionId"],
                "requestId": event["requestId"],
                "decision": "once",
            }
            self.in_background("agent/approve", self.request("agent/approve", approve))

    def on_event(self, event: dict[str, Any]) -> None:
        """Called for each agent/event (a layer shows or times it)."""

    def approves(self, event: dict[str, Any]) -> bool:
        """Whether to answer this permission request with agent/approve "once"."""
        return self.auto_approve

    def session_events(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events
            if e.get("sessionId") == session_id and (kind is None or e.get("type") == kind)
        ]

    async def wait_event(
        self,
        session_id: str,
        kind: str,
        count: int = 1,
        timeout: float = 15.0,  # noqa: ASYNC109
    ) -> dict[str, Any]:
        """The `count`th event of this kind in the session, once it has come."""

        async def poll() -> dict[str, Any]:
            while True:
                found = self.session_events(session_id, kind)
                if len(found) >= count:
                    return found[count - 1]
                self._signal.clear()
                await self._signal.wait()

        return await asyncio.wait_for(poll(), timeout)

    def in_background(self, what: str, coro: Any) -> None:
        """Run `coro` in the background (kept until done; failures go to task_failed)."""
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                self.task_failed(what, t.exception())

        task.add_done_callback(done)

    def task_failed(self, what: str, error: BaseException | None) -> None:
        """A background task failed (the demo says so)."""

    # ---- life cycle ---------------------------------------------------------------------

    async def start(
        self,
        cwd: Path | str,
        env: dict[str, str] | None = None,
        command: Sequence[str] | None = None,
        stderr_to: Callable[[str], None] | None = None,
        limit: int = 64 * 1024 * 1024,
    ) -> None:
        """Run `agentls serve` (or `command`) in `cwd`; its stderr lines go to `stderr_to` and the
        last ones are kept in server_stderr."""
        cmd = list(command or serve_command())
        await self.client.start_io(cmd[0], *cmd[1:], cwd=cwd, env=env, limit=limit)
        server = self.client._server
        if server is not None and server.stderr is not None:
            self.in_background("reading the server's stderr", self._drain(server.stderr, stderr_to))

    async def _drain(
        self, stream: asyncio.StreamReader, stderr_to: Callable[[str], None] | None
    ) -> None:
        """Keep the server's stderr flowing (a full pipe would stall it)."""
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").rstrip("\n")
            self.server_stderr.append(text)
            if stderr_to is not None:
                stderr_to(text)

    @property
    def pid(self) -> int | None:
        server = self.client._server
        return server.pid if server is not None else None

    def initialize_params(
        self,
        root: Path,
        capabilities: types.ClientCapabilities,
        agent_options: dict[str, Any] | None = None,
        name: str = "agentls-client",
    ) -> types.InitializeParams:
        return types.InitializeParams(
            process_id=os.getpid(),
            capabilities=capabilities,
            root_uri=from_fs_path(str(root)),
            workspace_folders=[
                types.WorkspaceFolder(uri=str(from_fs_path(str(root))), name=root.name)
            ],
            client_info=types.ClientInfo(name=name, version=__version__),
            initialization_options={"agent": agent_options or {}},
        )

    async def initialize(
        self,
        params: types.InitializeParams,
        timeout: float = REQUEST_TIMEOUT_S,  # noqa: ASYNC109
    ) -> types.InitializeResult:
        """initialize, then initialized; the position encoding the server chose is kept."""
        result: types.InitializeResult = await asyncio.wait_for(
            self.client.initialize_async(params), timeout
        )
        encoding = result.capabilities.position_encoding
        self.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self) -> None:
        """shutdown, exit, and wait for the server to end (killed if it does not)."""
        server = self.client._server
        try:
            if server is not None and server.returncode is None:
                await asyncio.wait_for(self.client.shutdown_async(None), STOP_TIMEOUT_S)
                self.client.exit(None)
                await asyncio.wait_for(server.wait(), STOP_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - a server that will not stop is killed below
            pass
        finally:
            if server is not None and server.returncode is None:
                server.kill()
                await server.wait()
            await asyncio.wait_for(self.client.stop(), STOP_TIMEOUT_S)  # type: ignore[no-untyped-call]
            for task in list(self._tasks):
                task.cancel()

    # ---- requests -----------------------------------------------------------------------

    def typed(self, method: str, params: Any) -> Any:
        """Plain JSON params of an LSP method as lsprotocol's type (pygls sends only that);
        agent/* params stay plain JSON."""
        if not isinstance(params, dict):
            return params
        try:
            cls = get_method_params_type(method)  # type: ignore[no-untyped-call]
        except MethodTypeNotRegisteredError:
            return params
        return params if cls is None else self.client.protocol._converter.structure(params, cls)

    async def request(
        self,
        method: str,
        params: Any,
        timeout: float = REQUEST_TIMEOUT_S,  # noqa: ASYNC109
    ) -> Any:
        return await asyncio.wait_for(self.send_request(method, params), timeout)

    def send_request(self, method: str, params: Any) -> Awaitable[Any]:
        """Sent now; its answer awaited later (pytest-lsp's client sends when awaited)."""
        answer: Awaitable[Any] = self.client.protocol.send_request_async(
            method, self.typed(method, params)
        )
        return answer

    def notify(self, method: str, params: Any) -> None:
        self.client.protocol.notify(method, self.typed(method, params))

    async def new_session(self, title: str | None = None) -> str:
        result = await self.request("agent/newSession", {"title": title} if title else {})
        return str(result["sessionId"])

    async def prompt(
        self,
        session_id: str,
        text: str,
        timeout: float = 30.0,  # noqa: ASYNC109
        **extra: Any,
    ) -> dict[str, Any]:
        result = await self.request(
            "agent/prompt", {"sessionId": session_id, "text": text, **extra}, timeout
        )
        return dict(result)
