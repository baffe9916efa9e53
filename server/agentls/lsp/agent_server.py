"""AgentServer: the pygls language server and what its features share: the workspace root, the
settings in force, the client's capabilities, the Agent (started at the first request that needs
it) and the tasks the server runs in the background."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from agentls import __version__
from agentls.config import Settings
from agentls.language import NoLanguages
from agentls.lsp.accepted import Proposal
from agentls.lsp.capabilities import ClientCaps
from agentls.lsp.language import EditorLanguages
from agentls.lsp.relay import EventRelay
from agentls.lsp.transport import AgentProtocol, converter, request_failed, store_failed
from agentls.lsp.workspace import LspWorkspace
from agentls.session import Agent, QuestionPresenter, StoreError
from agentls.workspace.folder_languages import FolderLanguages
from agentls.workspace.folders import Folders

log = logging.getLogger(__name__)


@dataclass
class PendingEdit:
    """An edit waiting for approval, offered as code actions to clients without approvals."""

    session_id: str
    request_id: str
    uri: str
    range: types.Range
    title: str
    # The proposal's TextEdits, one per hunk, in order (none for a new file), and the version of
    # the document they were made against: "Accept this hunk" sends back some of them.
    hunks: list[types.TextEdit] = field(default_factory=list)
    version: int | None = None


class AgentServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "agentls",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=AgentProtocol,
            converter_factory=converter,
        )
        self.root = Path(os.getcwd())
        # Every workspace folder, the root first (lsp/folders.py), and the settings of each other
        # folder from its own config: the rules of the paths in it.
        self.folders = Folders.single(self.root)
        self.folder_settings: dict[Path, Settings] = {}
        self.settings = Settings()
        self.client_caps = ClientCaps()
        # The overrides of initializationOptions, and those the settings were last loaded with
        # (initialize's, then a configuration change's), so a grant of workspace trust can load
        # them again (see lsp/settings.py).
        self.init_overrides: dict[str, Any] = {}
        self.overrides: dict[str, Any] = {}
        # Whether the editor says the workspace is trusted (initializationOptions.agent.
        # workspaceTrusted, a configuration change, agent/workspaceTrust). Untrusted by default:
        # the workspace's .agentls/config.json then only tightens, unless `agentls trust`
        # recorded its content (see agentls.trust).
        self.workspace_trusted = False
        self.notices_shown: set[str] = set()
        # The workspace config contents (file, sha256) the editor was asked about in this run
        # (agent/confirmWorkspaceConfig, see lsp/settings.py): each is asked once.
        self.config_questions: set[tuple[str, str]] = set()
        # The workspace config files' sha256 when the settings were last loaded (lsp/settings.py).
        self.config_fingerprint: tuple[str | None, ...] = ()
        # Why the settings could not be loaded at initialize; the agent refuses to work until a
        # workspace/didChangeConfiguration brings valid ones.
        self.config_error: str | None = None
        # How a permission question is shown (lsp/approvals.py, set when the server is built).
        self.presenter: QuestionPresenter | None = None
        self.pending_edits: dict[str, PendingEdit] = {}
        # The open questions by request id, with the change each proposes: an accepted `edit`
        # (agent/approve) is checked against it.
        self.proposals: dict[str, Proposal] = {}
        self.ws: LspWorkspace | None = None
        # The background sessions this server runs, by session id (lsp/background_run.py): their
        # questions' answers go to their Agent.
        self.background_agents: dict[str, Agent] = {}
        self.relay = EventRelay(
            lambda payload: self.protocol.notify("agent/event", payload),
            lambda: self.work_done_progress if self.client_caps.work_done_progress else None,
        )
        self._agent: Agent | None = None
        self._agent_lock: asyncio.Lock | None = None
        self.store_error_shown = False  # the store could not be opened, and the user was told
        self._background: set[asyncio.Task[Any]] = set()
        self._language_ids = itertools.count(1)  # ids of our agent/languageRequest requests

    # ---- the agent ----------------------------------------------------------------------

    async def agent(self) -> Agent:
        """The Agent, started at the first call (its store opened); refused (RequestFailed) while
        the settings are bad or the store cannot be opened."""
        if self.config_error is not None:
            raise request_failed(
                f"agentls: {self.config_error} (fix them; the next "
                "workspace/didChangeConfiguration applies them)"
            )
        if self._agent is not None:
            return self._agent
        if self._agent_lock is None:
            self._agent_lock = asyncio.Lock()
        async with self._agent_lock:
            if self._agent is None:
                workspace = self.workspace_for_agent()
                try:
                    agent = await Agent.open(
                        settings=self.settings,
                        files=workspace,
                        presenter=self.presenter,
                        front_end="editor",
                    )
                except StoreError as exc:
                    # Told once; every agent request answers with it until the store opens (the
                    # next request tries again, so fixing it needs no restart).
                    if not self.store_error_shown:
                        self.store_error_shown = True
                        self.show_message(f"agentls: {exc.message}")
                    raise store_failed(exc) from None
                self.ws = workspace
                agent.policy.update_folders(self.folder_settings)
                agent.subscribe(self.relay)
                self._agent = agent
        assert self._agent is not None
        return self._agent

    @property
    def running_agent(self) -> Agent | None:
        """The Agent if it has started (None: no request needed it yet)."""
        return self._agent

    def workspace_for_agent(self) -> LspWorkspace:
        """The editor's buffers as the agent's workspace, reaching the client through callbacks."""
        workspace = LspWorkspace(
            self.root,
            documents=lambda uri: self.workspace.text_documents.get(uri),
            caps=lambda: self.client_caps,
            settings=lambda: self.settings,
            apply_edit=self.workspace_apply_edit_async,
            publish_diagnostics=self.publish_diagnostics,
            languages=NoLanguages(),
            folders=self.folders,
        )
        workspace.languages = self.editor_languages(workspace)
        workspace.session_title = self.session_title
        return workspace

    async def session_title(self, session: str | None) -> str | None:
        """A session's title (its edits' change annotation says it), None when unknown."""
        agent = self.running_agent
        record = await agent.store.get_session(session) if agent and session else None
        return record.title if record is not None else None

    def editor_languages(self, workspace: LspWorkspace) -> EditorLanguages:
        """The editor's language servers for what the client declared in
        capabilities.experimental.agent.languageRequests; for the rest, those agentls starts
        itself from `languageServers` (documents read from the editor's buffers)."""

        async def send(method: str, params: dict[str, Any]) -> Any:
            msg_id = f"agentls-language-{next(self._language_ids)}"
            future = self.protocol.send_request(method, params, msg_id=msg_id)
            try:
                return await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                # Timed out (or the turn was cancelled): the editor may stop working on it, and
                # a late answer finds nothing waiting.
                self.protocol._request_futures.pop(msg_id, None)
                self.protocol._result_types.pop(msg_id, None)
                self.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
                raise

        return EditorLanguages(
            send=send,
            declared=lambda: self.client_caps.language_requests,
            timeout_s=lambda: self.settings.language_timeout_s,
            structure=self.protocol._converter.structure,
            fallback=FolderLanguages(self.folders, lambda: self.settings, workspace.read_text),
        )

    def start_background_import(self) -> None:
        """Import the SDK now, off the event loop, so the first prompt does not wait for it (the
        provider creates its client from it, in a thread too: see AnthropicProvider.stream)."""

        def load() -> None:
            try:
                import anthropic  # noqa: F401
            except Exception:  # pragma: no cover - reported when a prompt needs it
                log.exception("importing anthropic failed")

        threading.Thread(target=load, name="agentls-import", daemon=True).start()

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        if self._agent is not None:
            await self._agent.aclose()  # the store with it
        self._agent = None

    # ---- helpers for features -----------------------------------------------------------

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def show_message(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def publish_diagnostics(self, uri: str, diagnostics: list[dict[str, Any]]) -> None:
        structure = self.protocol._converter.structure
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[structure(d, types.Diagnostic) for d in diagnostics]
            )
        )
