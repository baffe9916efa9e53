"""`agentls serve`: the agent protocol over LSP (stdio), hosting the agent loop.

Custom requests (agent/*) arrive as raw JSON objects and are validated here with the protocol's
pydantic models, so bad input is a JSON-RPC -32602 error naming the field, never a crash.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    LanguageServerProtocol,
    lsp_method,
)
from pygls.protocol import default_converter as pygls_default_converter
from pygls.uris import to_fs_path

from agentls import __version__
from agentls.config import Settings, load_settings
from agentls.events import ErrorEvent, PermissionRequestEvent, PermissionResolvedEvent
from agentls.history import ContextPart, Position, Range
from agentls.lsp.bootstrap import EarlyAnswer
from agentls.lsp.relay import EventRelay
from agentls.lsp.textedit import offset_at
from agentls.lsp.workspace import LspWorkspace, uri_of
from agentls.permission.broker import Answer, ApprovalError
from agentls.protocol.models import (
    PROTOCOL_VERSION,
    AgentInitOptions,
    ApproveParams,
    ApproveResult,
    CancelParams,
    CancelResult,
    ClientAgentCapabilities,
    DiagnosticsParams,
    GetMessagesParams,
    GetMessagesResult,
    ListSessionsParams,
    ListSessionsResult,
    MessageInfo,
    NewSessionParams,
    NewSessionResult,
    PromptParams,
    PromptResult,
    RevertParams,
    RevertResult,
    RunOnSelectionParams,
    RunOnSelectionResult,
    SessionInfo,
    TurnFinishReason,
    WorkspaceTrustParams,
)
from agentls.session.agent import Agent, AskContext, SessionBusyError, answer_taken
from agentls.store import Store, StoreError, default_db_path
from agentls.verify.commands import run_verify_commands
from agentls.workspace.disk import read_text_file

log = logging.getLogger(__name__)
P = TypeVar("P", bound=BaseModel)
# LSP's RequestFailed: a request that is valid but cannot be served now.
REQUEST_FAILED = -32803
# A context file that is not open in the editor is attached only up to this size.
CONTEXT_MAX_FILE_BYTES = 4 * 1024 * 1024


def _converter() -> Any:
    """pygls' converter, but params of methods it does not know stay plain JSON objects (it would
    turn them into namedtuples, losing keys it cannot name)."""
    converter = pygls_default_converter()  # type: ignore[no-untyped-call]

    def keep(obj: dict[str, Any], cls: type) -> Any:
        # JSON-RPC lets a call leave out params (agent/listSessions needs none).
        return cls(**{"params": None, **obj})

    converter.register_structure_hook(JsonRPCRequestMessage, keep)
    converter.register_structure_hook(JsonRPCNotification, keep)
    return converter


def store_failed(exc: StoreError) -> JsonRpcException:
    """The answer to a request the store could not serve: RequestFailed, with its one line."""
    return JsonRpcException(code=REQUEST_FAILED, message=f"agentls: {exc.message}")


def answering_store_errors(handler: Callable[..., Any]) -> Callable[..., Any]:
    """A request handler whose store faults (and a session busy in another process) are answered
    as RequestFailed with the store's one line, not as an internal error with a traceback."""

    @functools.wraps(handler)
    async def answer(ls: AgentServer, *args: Any) -> Any:
        try:
            return await handler(ls, *args)
        except StoreError as exc:
            raise store_failed(exc) from None

    return answer


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


@dataclass
class ClientCaps:
    apply_edit: bool = False
    document_changes: bool = False
    create_files: bool = False
    delete_files: bool = False
    work_done_progress: bool = False
    show_message_request: bool = False


@dataclass
class PendingEdit:
    """An edit waiting for approval, offered as code actions to clients without approvals."""

    session_id: str
    request_id: str
    uri: str
    range: types.Range
    title: str


def _is_request_id(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


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


class _PrefixedReader:
    """The stdin reader, serving first the bytes agentls.lsp.bootstrap already read from stdin
    (the first message, answered early or not): to pygls' reader loop, the input as it came."""

    def __init__(self, prefix: bytes, inner: Any, on_drained: Callable[[], None]) -> None:
        self.buffer = prefix
        self.inner = inner
        self.on_drained: Callable[[], None] | None = on_drained

    def _drained(self) -> None:
        if self.on_drained is not None:
            on_drained, self.on_drained = self.on_drained, None
            on_drained()

    async def readline(self) -> bytes:
        if not self.buffer:
            self._drained()
            line: bytes = await self.inner.readline()
            return line
        end = self.buffer.find(b"\n") + 1
        if end:
            line, self.buffer = self.buffer[:end], self.buffer[end:]
            return line
        # The rest of a line that goes on in stdin (or was cut short by the end of the input).
        line, self.buffer = self.buffer, b""
        rest: bytes = await self.inner.readline()
        return line + rest

    async def readexactly(self, n: int) -> bytes:
        if not self.buffer:
            self._drained()
            body: bytes = await self.inner.readexactly(n)
            return body
        body, self.buffer = self.buffer[:n], self.buffer[n:]
        if len(body) < n:
            body += await self.inner.readexactly(n - len(body))
        return body


class WriteCapture:
    """A writer for pygls' protocol that keeps what it is given (the bytes of the frames)."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


class _RememberingReader:
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


class AgentProtocol(LanguageServerProtocol):
    """Adds the agent's experimental capability to the initialize result, and answers every
    request it cannot dispatch with a JSON-RPC error (pygls would drop it silently, and the
    client would wait forever)."""

    # The answer to `initialize` agentls.lsp.bootstrap sent before pygls was loaded: pygls' own
    # answer to that request is checked against it and not sent again.
    early_answer: EarlyAnswer | None = None

    def _send_response(
        self,
        msg_id: Any,
        result: Any | None = None,
        error: types.ResponseError | None = None,
    ) -> None:
        early = self.early_answer
        if early is None or type(msg_id) is not type(early.msg_id) or msg_id != early.msg_id:
            super()._send_response(msg_id, result, error)
            return
        self.early_answer = None
        writer = self.writer
        capture = WriteCapture()
        self.writer = capture
        try:
            super()._send_response(msg_id, result, error)
        finally:
            self.writer = writer
        if capture.data != early.frame:
            log.error(
                "the early answer to initialize differs from pygls' answer: sent %r, pygls %r",
                early.frame[:2000],
                capture.data[:2000],
            )

    def early_answer_settled(self) -> None:
        """Called once the request answered early has been handled (the reader went past it)."""
        if self.early_answer is not None:
            log.error("initialize was answered early, but pygls did not answer it")
            self.early_answer = None

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"agent": {"protocolVersion": PROTOCOL_VERSION}}
        return result

    def answer_error(self, msg_id: Any, code: int, message: str) -> None:
        try:
            self._send_response(msg_id, error=types.ResponseError(code=code, message=message))
        except Exception:  # pragma: no cover - never let an error answer break the loop
            log.exception("could not answer request %r", msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except Exception as exc:
            if "method" in data and _is_request_id(data.get("id")):
                code = exc.code if isinstance(exc, JsonRpcException) else -32603
                detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
                self.answer_error(data["id"], code, f"{detail} (method {data['method']!r})")
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict | list) or not hasattr(message, "jsonrpc"):
            # Not a JSON-RPC 2.0 message: no "jsonrpc" member, or a batch, string, number, null.
            msg_id = message.get("id") if isinstance(message, dict) else None
            if isinstance(message, dict) and "method" in message and _is_request_id(msg_id):
                self.answer_error(msg_id, -32600, 'Invalid Request: "jsonrpc": "2.0" is required')
            elif not isinstance(message, dict):
                self.answer_error(None, -32600, "Invalid Request: expected a JSON object")
            log.warning("ignoring a message that is not JSON-RPC 2.0")
            return
        msg_id = getattr(message, "id", None)
        if message.jsonrpc != self.VERSION and hasattr(message, "method"):
            if _is_request_id(msg_id):
                self.answer_error(msg_id, -32600, 'Invalid Request: "jsonrpc" must be "2.0"')
            return
        if hasattr(message, "method") and msg_id is not None and not _is_request_id(msg_id):
            # An id that is an object, an array or a float cannot be answered reliably.
            self.answer_error(None, -32600, "Invalid Request: id must be a string or an integer")
            return
        super().handle_message(message)


class AgentServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "agentls",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=AgentProtocol,
            converter_factory=_converter,
        )
        self.root = Path(os.getcwd())
        self.settings = Settings()
        self.client_caps = ClientCaps()
        self.agent_caps = ClientAgentCapabilities()
        self.position_encoding = "utf-16"
        self.init_overrides: dict[str, Any] = {}
        # The overrides the settings were last loaded with (initialize's, then a configuration
        # change's), so a grant of workspace trust can load them again.
        self.overrides: dict[str, Any] = {}
        # Whether the editor says the workspace is trusted (initializationOptions.agent.
        # workspaceTrusted, a configuration change, agent/workspaceTrust). Untrusted by default:
        # the workspace's .agentls/config.json then only tightens, unless `agentls trust`
        # recorded its content (see agentls.trust).
        self.workspace_trusted = False
        self._notices_shown: set[str] = set()
        # Why the settings could not be loaded at initialize; the agent refuses to work until a
        # workspace/didChangeConfiguration brings valid ones.
        self.config_error: str | None = None
        self._agent: Agent | None = None
        self._store: Store | None = None
        self.store_error_shown = False  # the store could not be opened, and the user was told
        self._agent_lock: asyncio.Lock | None = None
        self.ws: LspWorkspace | None = None
        self.relay = EventRelay(self)
        self.pending_edits: dict[str, PendingEdit] = {}
        self._background: set[asyncio.Task[Any]] = set()

    # ---- set-up -------------------------------------------------------------------------

    def configure(self, params: types.InitializeParams) -> None:
        root_uri = params.root_uri
        if params.workspace_folders:
            root_uri = params.workspace_folders[0].uri
        if root_uri:
            self.root = Path(to_fs_path(root_uri) or os.getcwd())
        elif params.root_path:
            self.root = Path(params.root_path)
        self.root = Path(os.path.realpath(self.root))
        options = params.initialization_options
        try:
            agent_options = options.get("agent") if isinstance(options, dict) else None
            if agent_options is not None and not isinstance(agent_options, dict):
                raise invalid("initializationOptions.agent: must be an object")
            init = AgentInitOptions.model_validate(agent_options or {})
            overrides = init.model_dump(by_alias=True, exclude_none=True)
            overrides.pop("workspaceTrusted", None)
            self.workspace_trusted = init.workspace_trusted is True
            self.settings = self.load(overrides)
            self.init_overrides = overrides
            self.config_error = None
        except Exception as exc:
            # Bad settings (initialization options, a config file) do not refuse the connection:
            # the answer to initialize never depends on them, which lets agentls.lsp.bootstrap
            # give it before they are read. The agent refuses to work until they are fixed
            # (agent()), and the editor is told once initialized.
            detail = exc.message if isinstance(exc, JsonRpcException) else str(exc)
            self.config_error = f"bad agent settings: {detail}"
            log.error("%s", self.config_error)
        caps = params.capabilities
        workspace = caps.workspace
        edit_caps = workspace.workspace_edit if workspace else None
        resource_ops = (
            [
                str(op.value if hasattr(op, "value") else op)
                for op in (edit_caps.resource_operations or [])
            ]
            if edit_caps
            else []
        )
        window = caps.window
        self.client_caps = ClientCaps(
            apply_edit=bool(workspace and workspace.apply_edit),
            document_changes=bool(edit_caps and edit_caps.document_changes),
            create_files="create" in resource_ops,
            delete_files="delete" in resource_ops,
            work_done_progress=bool(window and window.work_done_progress),
            show_message_request=True,
        )
        experimental = caps.experimental if isinstance(caps.experimental, dict) else {}
        agent_caps = experimental.get("agent") if isinstance(experimental, dict) else None
        self.agent_caps = ClientAgentCapabilities.model_validate(
            agent_caps if isinstance(agent_caps, dict) else {}
        )
        encoding = (
            self.workspace.position_encoding if self.protocol._workspace is not None else None
        )
        self.position_encoding = str(getattr(encoding, "value", encoding) or "utf-16")

    def start_background_import(self) -> None:
        """Import the SDK now, off the event loop, so the first prompt does not wait for it."""

        def load() -> None:
            try:
                import anthropic  # noqa: F401
            except Exception:  # pragma: no cover - reported when a prompt needs it
                log.exception("importing anthropic failed")

        threading.Thread(target=load, name="agentls-import", daemon=True).start()

    async def agent(self) -> Agent:
        if self.config_error is not None:
            raise JsonRpcException(
                code=REQUEST_FAILED,
                message=f"agentls: {self.config_error} (fix them; the next "
                "workspace/didChangeConfiguration applies them)",
            )
        if self._agent is not None:
            return self._agent
        if self._agent_lock is None:
            self._agent_lock = asyncio.Lock()
        async with self._agent_lock:
            if self._agent is None:
                try:
                    self._store = await Store.open(default_db_path())
                except StoreError as exc:
                    # Told once; every agent request answers with it until the store opens (the
                    # next request tries again, so fixing it needs no restart).
                    if not self.store_error_shown:
                        self.store_error_shown = True
                        self.window_show_message(
                            types.ShowMessageParams(
                                type=types.MessageType.Error,
                                message=f"agentls: {exc.message}",
                            )
                        )
                    raise store_failed(exc) from None
                self.ws = LspWorkspace(self, self.root)
                agent = Agent(
                    store=self._store, workspace=self.ws, settings=self.settings, asker=self.ask
                )
                agent.subscribe(self.relay)
                self._agent = agent
        assert self._agent is not None
        return self._agent

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        if self._agent is not None:
            await self._agent.aclose()
        if self._store is not None:
            await self._store.close()
        self._agent = None
        self._store = None

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def settings_verify_wait_s(self) -> float:
        return self.settings.verify_wait_s

    def apply_configuration(self, agent_settings: Any) -> None:
        if agent_settings is None:
            return
        if not isinstance(agent_settings, dict):
            raise invalid("agent settings must be an object")
        options = AgentInitOptions.model_validate(agent_settings)
        changed = options.model_dump(by_alias=True, exclude_none=True)
        changed.pop("workspaceTrusted", None)
        trusted = self.workspace_trusted
        if options.workspace_trusted is not None:
            trusted = options.workspace_trusted
        self.reload_settings({**self.init_overrides, **changed}, trusted)

    def load(self, overrides: dict[str, Any]) -> Settings:
        settings = load_settings(
            self.root, overrides, workspace_trusted=self.workspace_trusted, editor=True
        )
        self.overrides = overrides
        return settings

    def reload_settings(self, overrides: dict[str, Any] | None, trusted: bool) -> None:
        """Load the settings again (new overrides, a grant of workspace trust) and hand them to the
        agent: no restart. Raises on bad settings, leaving the previous ones in force."""
        previous = self.workspace_trusted
        self.workspace_trusted = trusted
        try:
            self.settings = self.load(self.overrides if overrides is None else overrides)
        except Exception:
            self.workspace_trusted = previous
            raise
        self.config_error = None
        if self._agent is not None:
            self._agent.update_settings(self.settings)
        self.tell_untrusted()

    def tell_untrusted(self) -> None:
        """Once per server run and file state: which keys of an untrusted workspace config were
        ignored, and how to trust it."""
        notice = self.settings.untrusted_notice
        if notice is None or notice in self._notices_shown:
            return
        self._notices_shown.add(notice)
        log.warning("%s", notice)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=notice)
        )

    # ---- approvals ----------------------------------------------------------------------

    async def ask(self, ctx: AskContext) -> Answer:
        agent = ctx.agent
        query = ctx.query
        request_id = agent.broker.open(ctx.session_id)
        edit_json: dict[str, Any] | None = None
        pending: PendingEdit | None = None
        if query.path is not None and query.new_text is not None and self.ws is not None:
            edit = self.ws.build_edit(query.path, query.new_text, query.old_text)
            edit_json = self.protocol._converter.unstructure(edit)
            change_range = _edit_range(edit)
            pending = PendingEdit(
                ctx.session_id, request_id, uri_of(query.path), change_range, query.title
            )
        agent.emit(
            PermissionRequestEvent(
                session_id=ctx.session_id,
                request_id=request_id,
                call_id=ctx.call_id,
                tool=query.tool,
                title=query.title,
                input=query.input,
                diff=query.diff,
                edit=edit_json,
                always=ctx.always,
                sandboxed=query.sandboxed,
            )
        )
        message_task = None
        if not self.agent_caps.approvals:
            # No panel to answer in: ask with the standard message request, and offer a pending
            # edit as code actions on its range.
            if pending is not None:
                self.pending_edits[request_id] = pending
            message_task = self.spawn(self._ask_with_message(ctx, request_id))
        try:
            answer = await agent.broker.wait(request_id)
        except asyncio.CancelledError:
            agent.emit(
                PermissionResolvedEvent(
                    session_id=ctx.session_id, request_id=request_id, decision="cancelled"
                )
            )
            raise
        finally:
            self.pending_edits.pop(request_id, None)
            if message_task is not None and not message_task.done():
                message_task.cancel()
        agent.emit(
            PermissionResolvedEvent(
                session_id=ctx.session_id,
                request_id=request_id,
                decision=answer_taken(answer, ctx),
            )
        )
        return answer

    async def _ask_with_message(self, ctx: AskContext, request_id: str) -> None:
        query = ctx.query
        text = f"agentls wants to run {query.tool}: {query.title}"
        if query.tool == "bash":
            text = f"agentls wants to run a command:\n{query.input.get('command', '')}"
        if query.diff:
            diff = query.diff if len(query.diff) < 1500 else query.diff[:1500] + "\n... (diff cut)"
            text += "\n\n" + diff
        # Each "always" button names what it allows (ctx.always, the grant's label); none when
        # "always" is not offered for this call.
        actions: dict[str, tuple[str, str]] = {"Allow once": ("once", "session")}
        if ctx.always:
            actions[f"{ctx.always} (this session)"] = ("always", "session")
            actions[f"{ctx.always} (this project)"] = ("always", "project")
        actions["Reject"] = ("reject", "session")
        try:
            result = await self.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message=text,
                    actions=[types.MessageActionItem(title=t) for t in actions],
                )
            )
        except asyncio.CancelledError:
            return
        except Exception:
            log.exception("showMessageRequest failed")
            return
        chosen = actions.get(result.title) if result is not None else None
        decision, scope = chosen or ("reject", "session")
        try:
            ctx.agent.approve(ctx.session_id, request_id, decision, scope=scope)
        except ApprovalError:
            pass  # answered elsewhere (a code action, agent/approve) or expired: never applied twice

    # ---- verification helpers used by LspWorkspace --------------------------------------

    def publish_own_diagnostics(self, uri: str, diagnostics: list[dict[str, Any]]) -> None:
        converter = self.protocol._converter
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[converter.structure(d, types.Diagnostic) for d in diagnostics]
            )
        )

    async def run_verify_commands(self, path: Path) -> str:
        return await run_verify_commands(path, self.root, self.settings.verify_commands)

    # ---- helpers for handlers -----------------------------------------------------------

    async def prompt_in_background(
        self, agent: Agent, session_id: str, text: str, context: list[ContextPart]
    ) -> None:
        """A prompt no request waits for (agent.runOnSelection): a refusal by the store (the
        session busy in another process, a store fault) is an error event of the session, and
        shown to the user."""
        try:
            await agent.prompt(session_id, text, context)
        except StoreError as exc:
            agent.emit(ErrorEvent(session_id=session_id, message=exc.message))
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"agentls: {exc.message}"
                )
            )

    async def session_or_error(self, agent: Agent, session_id: str) -> None:
        try:
            await agent.session(session_id)
        except KeyError:
            raise invalid(f"Invalid params: sessionId: unknown session {session_id!r}") from None

    async def context_parts(self, refs: list[Any]) -> list[ContextPart]:
        parts = []
        for ref in refs:
            path = Path(to_fs_path(ref.uri) or ref.uri)
            text: str | None
            try:
                assert self.ws is not None
                doc = self.ws.open_document(path)
                if doc is not None:
                    text = str(doc.source)
                else:
                    # Any file the editor names, but never a device or a huge file whole.
                    text = await asyncio.to_thread(read_text_file, path, CONTEXT_MAX_FILE_BYTES)
            except (OSError, UnicodeDecodeError, ValueError):
                text = None
            if text is not None and ref.range is not None:
                start = offset_at(
                    text,
                    types.Position(line=ref.range.start.line, character=ref.range.start.character),
                    self.position_encoding,
                )
                end = offset_at(
                    text,
                    types.Position(line=ref.range.end.line, character=ref.range.end.character),
                    self.position_encoding,
                )
                text = text[start:end]
            if text is not None and len(text) > 100_000:
                text = text[:100_000] + "\n... (cut)"
            parts.append(ContextPart(uri=ref.uri, range=ref.range, text=text))
        return parts


def _edit_range(edit: types.WorkspaceEdit) -> types.Range:
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.edits:
            first = change.edits[0]
            return first.range
    for edits in (edit.changes or {}).values():
        if edits:
            return edits[0].range
    zero = types.Position(line=0, character=0)
    return types.Range(start=zero, end=zero)


def _ranges_touch(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges share a line (a lightbulb is offered per line, not per character)."""
    return a.start.line <= b.end.line and b.start.line <= a.end.line


def build_server() -> AgentServer:
    server = AgentServer()

    def request(method: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(handler: Callable[..., Any]) -> Callable[..., Any]:
            return server.feature(method)(answering_store_errors(handler))

        return register

    @server.feature(types.INITIALIZE)
    def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
        ls.configure(params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: AgentServer, params: types.InitializedParams) -> None:
        ls.start_background_import()
        ls.tell_untrusted()
        if ls.config_error is not None:
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"agentls: {ls.config_error}. The agent is off until they are fixed.",
                )
            )

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: AgentServer, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        if isinstance(settings, dict):
            try:
                ls.apply_configuration(settings.get("agent"))
            except (ValidationError, JsonRpcInvalidParams, ValueError) as exc:
                ls.window_log_message(
                    types.LogMessageParams(
                        type=types.MessageType.Error, message=f"agentls: bad agent settings: {exc}"
                    )
                )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AgentServer, params: types.DidOpenTextDocumentParams) -> None:
        if ls.ws is not None:
            ls.ws.document_changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AgentServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.ws is not None:
            ls.ws.document_changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AgentServer, params: types.DidSaveTextDocumentParams) -> None:
        if ls.ws is not None:
            ls.ws.document_saved(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AgentServer, params: types.DidCloseTextDocumentParams) -> None:
        return None

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: AgentServer, params: Any) -> None:
        await ls.close()

    @request("agent/newSession")
    async def new_session(ls: AgentServer, raw: Any) -> dict[str, Any]:
        params = parse(NewSessionParams, raw)
        agent = await ls.agent()
        record = await agent.new_session(params.title)
        return NewSessionResult(session_id=record.id).wire()

    @request("agent/prompt")
    async def prompt(ls: AgentServer, raw: Any) -> dict[str, Any]:
        params = parse(PromptParams, raw)
        agent = await ls.agent()
        await ls.session_or_error(agent, params.session_id)
        context = await ls.context_parts(params.context or [])
        result = await agent.prompt(params.session_id, params.text, context)
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # $/cancelRequest: the turn was cancelled cleanly; answer as the protocol says.
            raise JsonRpcRequestCancelled()
        return PromptResult(
            session_id=result.session_id,
            message_id=result.message_id,
            # A turn never ends on tool_use (that is a step's reason), so this is a turn reason.
            finish_reason=cast(TurnFinishReason, result.finish_reason),
            text=result.text,
            usage=result.usage,
        ).wire()

    @request("agent/cancel")
    async def cancel(ls: AgentServer, raw: Any) -> dict[str, Any]:
        params = parse(CancelParams, raw)
        agent = await ls.agent()
        try:
            cancelled = await agent.cancel(params.session_id)
        except KeyError:
            raise invalid(
                f"Invalid params: sessionId: unknown session {params.session_id!r}"
            ) from None
        return CancelResult(cancelled=cancelled).wire()

    async def approve_impl(ls: AgentServer, raw: Any) -> dict[str, Any]:
        if (
            isinstance(raw, dict)
            and "decision" in raw
            and raw["decision"] not in ("once", "always", "reject")
        ):
            raise invalid(
                f"Invalid params: decision: must be once, always or reject (got {raw['decision']!r})"
            )
        params = parse(ApproveParams, raw)
        agent = await ls.agent()
        await ls.session_or_error(agent, params.session_id)
        try:
            agent.approve(
                params.session_id,
                params.request_id,
                params.decision,
                params.feedback,
                params.scope,
            )
        except ApprovalError as exc:
            raise invalid(f"Invalid params: requestId: {exc}") from None
        return ApproveResult().wire()

    @request("agent/approve")
    async def approve(ls: AgentServer, raw: Any) -> dict[str, Any]:
        return await approve_impl(ls, raw)

    @request("agent/listSessions")
    async def list_sessions(ls: AgentServer, raw: Any) -> dict[str, Any]:
        parse(ListSessionsParams, raw)
        agent = await ls.agent()
        records = await agent.store.list_sessions(cwd=str(ls.root))
        sessions = [
            SessionInfo(
                session_id=r.id,
                title=r.title,
                created_at=r.created_at,
                updated_at=r.updated_at,
                busy=agent.is_busy(r.id),
                model=r.model,
                usage=r.usage,
            )
            for r in records
        ]
        return ListSessionsResult(sessions=sessions).wire()

    @request("agent/getMessages")
    async def get_messages(ls: AgentServer, raw: Any) -> dict[str, Any]:
        params = parse(GetMessagesParams, raw)
        agent = await ls.agent()
        await ls.session_or_error(agent, params.session_id)
        state = await agent.session(params.session_id)
        messages = [
            MessageInfo(
                id=m.id,
                role=m.role,
                created_at=m.created_at,
                parts=list(m.parts),
                finish_reason=m.finish_reason,
                reverted=m.reverted or None,
            )
            for m in state.messages
        ]
        return GetMessagesResult(messages=messages).wire()

    @request("agent/revert")
    async def revert(ls: AgentServer, raw: Any) -> dict[str, Any]:
        params = parse(RevertParams, raw)
        agent = await ls.agent()
        await ls.session_or_error(agent, params.session_id)
        try:
            outcome = await agent.revert(params.session_id, params.message_id)
        except KeyError as exc:
            raise invalid(f"Invalid params: messageId: {exc.args[0]}") from None
        except SessionBusyError as exc:
            raise invalid(f"Invalid params: sessionId: {exc}") from None
        note = None
        if outcome.bash_not_undone:
            note = "Commands run with bash in those messages were not undone."
        if outcome.problems:
            note = ((note + " ") if note else "") + "Not restored: " + "; ".join(outcome.problems)
        return RevertResult(
            files=[uri_of(Path(f)) for f in outcome.files],
            bash_not_undone=outcome.bash_not_undone,
            note=note,
        ).wire()

    @request("agent/workspaceTrust")
    def workspace_trust(ls: AgentServer, raw: Any) -> None:
        # The editor granted (or withdrew) trust: the workspace config applies in full (or only
        # tightens) from the next tool call on, without a restart.
        try:
            params = parse(WorkspaceTrustParams, raw)
            ls.reload_settings(None, params.trusted)
        except (JsonRpcInvalidParams, ValidationError, ValueError) as exc:
            detail = exc.message if isinstance(exc, JsonRpcInvalidParams) else str(exc)
            log.warning("agent/workspaceTrust: %s", detail)
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error, message=f"agentls: bad agent settings: {detail}"
                )
            )

    @request("agent/diagnostics")
    async def diagnostics(ls: AgentServer, raw: Any) -> None:
        try:
            params = parse(DiagnosticsParams, raw)
        except JsonRpcInvalidParams as exc:
            log.warning("ignoring agent/diagnostics: %s", exc.message)
            return
        if ls.config_error is not None:
            return  # no agent to verify edits with; a notification has no one to tell
        await ls.agent()
        assert ls.ws is not None
        await ls.ws.board.push(params.uri, params.version, params.diagnostics)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                types.CodeActionKind.RefactorRewrite,
                types.CodeActionKind.Empty,
            ]
        ),
    )
    def code_action(ls: AgentServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        rng = params.range
        args = {"uri": uri, "range": ls.protocol._converter.unstructure(rng)}
        actions: list[types.CodeAction] = []
        for pending in list(ls.pending_edits.values()):
            if pending.uri == uri and _ranges_touch(pending.range, rng):
                for title, decision in (
                    ("Accept agent edit", "once"),
                    ("Reject agent edit", "reject"),
                ):
                    actions.append(
                        types.CodeAction(
                            title=f"{title}: {pending.title}",
                            kind=types.CodeActionKind.QuickFix,
                            command=types.Command(
                                title=title,
                                command="agent.approve",
                                arguments=[
                                    {
                                        "sessionId": pending.session_id,
                                        "requestId": pending.request_id,
                                        "decision": decision,
                                    }
                                ],
                            ),
                        )
                    )
        problems = [d for d in params.context.diagnostics]
        fix_instruction = "Fix the problems in the selected code."
        if problems:
            listed = "\n".join(
                f"- line {d.range.start.line + 1}: {d.message}" for d in problems[:20]
            )
            fix_instruction += "\nThe editor reports:\n" + listed
        for title, instruction, kind in (
            (
                "Ask agent about this",
                "Explain the selected code and point out anything wrong with it.",
                types.CodeActionKind.Empty,
            ),
            ("Agent: fix the problems here", fix_instruction, types.CodeActionKind.QuickFix),
            (
                "Agent: refactor this",
                "Refactor the selected code for clarity without changing its behaviour.",
                types.CodeActionKind.RefactorRewrite,
            ),
        ):
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=kind,
                    diagnostics=problems
                    if kind == types.CodeActionKind.QuickFix and problems
                    else None,
                    command=types.Command(
                        title=title,
                        command="agent.runOnSelection",
                        arguments=[{**args, "instruction": instruction}],
                    ),
                )
            )
        return actions

    @server.command("agent.approve")
    @answering_store_errors
    async def approve_command(ls: AgentServer, *args: Any) -> dict[str, Any]:
        if len(args) != 1:
            raise invalid("Invalid params: arguments: expected one params object")
        return await approve_impl(ls, args[0])

    @server.command("agent.runOnSelection")
    @answering_store_errors
    async def run_on_selection(ls: AgentServer, *args: Any) -> dict[str, Any]:
        if len(args) != 1:
            raise invalid("Invalid params: arguments: expected one params object")
        params = parse(RunOnSelectionParams, args[0])
        agent = await ls.agent()
        session_id = params.session_id
        if session_id is not None:
            await ls.session_or_error(agent, session_id)
        else:
            recent = await agent.store.list_sessions(limit=1, cwd=str(ls.root))
            session_id = recent[0].id if recent else (await agent.new_session()).id
        from agentls.protocol.models import ContextRef

        context = await ls.context_parts([ContextRef(uri=params.uri, range=params.range)])
        ls.spawn(ls.prompt_in_background(agent, session_id, params.instruction, context))
        return RunOnSelectionResult(session_id=session_id).wire()

    return server


class _AnsweredErrors(logging.Filter):
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


def serve(prefix: bytes = b"", early: EarlyAnswer | None = None) -> int:
    """Run on stdin/stdout until `exit` or end of input. Either way, running turns are cancelled
    and persisted before the process ends (a client that disconnects mid-turn loses nothing).

    Started by agentls.lsp.bootstrap: `prefix` is what it already read from stdin (read first),
    `early` the answer to `initialize` it already sent, if any."""
    from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async

    logging.basicConfig(level=os.environ.get("AGENTLS_LOG", "WARNING"), stream=sys.stderr)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_AnsweredErrors())
    server = build_server()
    started = time.monotonic()
    log.info("agentls serve starting (pid %d)", os.getpid())
    stop_event = threading.Event()
    server._stop_event = stop_event
    protocol = cast(AgentProtocol, server.protocol)
    stdin: Any = StdinAsyncReader(sys.stdin.buffer, server.thread_pool)
    if prefix:
        stdin = _PrefixedReader(prefix, stdin, protocol.early_answer_settled)
    if early is not None:
        log.info("initialize (id %r) was answered early", early.msg_id)
        protocol.early_answer = early
    reader = _RememberingReader(stdin)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))

    def on_error(exc: Exception, source: Any) -> None:
        server.report_server_error(exc, source)
        body = reader.last_body
        try:
            json.loads(body)
        except (ValueError, RecursionError):
            # Not JSON (or nested too deep to parse): a request among it still gets its answer.
            fields = top_level_fields(body, ("id", "method"))
            if "method" in fields and _is_request_id(fields.get("id")):
                protocol.answer_error(fields["id"], -32700, f"Parse error: {exc}"[:500])

    async def main() -> None:
        try:
            await run_async(
                stop_event=stop_event,
                reader=reader,
                protocol=server.protocol,
                logger=log,
                error_handler=on_error,
            )
        finally:
            await server.close()

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
    log.info("agentls serve stopped after %.1f s", time.monotonic() - started)
    return code


__all__ = ["AgentServer", "build_server", "serve", "Position", "Range"]
