"""A small editor for tests: our protocol client (agentls.lsp.client.AgentClient) on a pytest-lsp
client, with buffers kept like an editor does.

It opens documents, types into them (didChange), applies the server's workspace edits to its
buffers (or, for files it has not opened, to disk as VS Code's background models end up), saves
when it declared `savesEdits`, pushes diagnostics when it declared `diagnosticsPush`, and records
every agent/event.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from agentls.lsp.client import AgentClient, agent_capabilities, converter, serve_command
from agentls.lsp.textedit import apply_text_edits


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=converter)
    register_lsp_features(client)  # pytest-lsp's recorders: progress, diagnostics, messages
    return client


def server_config(env: dict[str, str]) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=serve_command(),
        client_factory=make_client,
        server_env=env,
    )


@dataclass
class Profile:
    """What the client declares and how it behaves."""

    document_changes: bool = True
    resource_operations: tuple[str, ...] = ("create", "rename", "delete")
    apply_edit: bool = True
    approvals: bool = True
    diagnostics_push: bool = True
    saves_edits: bool = True
    work_done_progress: bool = True
    change_annotations: bool = False

    def capabilities(self) -> types.ClientCapabilities:
        return agent_capabilities(
            approvals=self.approvals,
            diagnostics_push=self.diagnostics_push,
            saves_edits=self.saves_edits,
            apply_edit=self.apply_edit,
            document_changes=self.document_changes,
            resource_operations=self.resource_operations,
            work_done_progress=self.work_done_progress,
            configuration=True,
            change_annotations=self.change_annotations,
        )


@dataclass
class Buffer:
    path: Path
    text: str
    version: int
    dirty: bool = False


@dataclass
class Editor(AgentClient):
    """The shared client (events, approvals, requests) with an editor's buffers and fakes."""

    client: LanguageClient
    root: Path
    profile: Profile
    buffers: dict[str, Buffer] = field(default_factory=dict)
    applied_edits: list[dict[str, Any]] = field(default_factory=list)
    # How to answer the next workspace/applyEdit: None = apply; a string = refuse with that reason.
    refuse_edits_with: str | None = None
    never_answer_edits: bool = False
    # Diagnostics to push after an edit is applied to a file: path name -> diagnostics.
    diagnostics_after_edit: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # How long after the edit they are pushed, as a slow language server does.
    diagnostics_delay_s: float = 0.0
    # Push first, at once, the diagnostics of the version before the edit, as real servers do.
    stale_push_first: bool = False
    message_requests: list[types.ShowMessageRequestParams] = field(default_factory=list)
    answer_message_with: str | None = "Allow once"
    # Answer every permission-request with agent/approve "once" (off for tests of the ask itself).
    auto_approve: bool = True
    # agent/confirmWorkspaceConfig: the questions asked, and the answer (None: never answered).
    config_questions: list[dict[str, Any]] = field(default_factory=list)
    apply_configs: bool | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(10_000))
    # Set when the test ends: handlers told never to answer give up then.
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        AgentClient.__init__(self, self.client, auto_approve=self.auto_approve)

    def approves(self, event: dict[str, Any]) -> bool:
        return self.auto_approve and self.profile.approvals

    # ---- set-up -------------------------------------------------------------------------

    def install_handlers(self) -> None:
        client = self.client

        if self.profile.apply_edit:

            @client.feature(types.WORKSPACE_APPLY_EDIT)
            async def on_apply_edit(
                params: types.ApplyWorkspaceEditParams,
            ) -> types.ApplyWorkspaceEditResult:
                self.applied_edits.append(client.protocol._converter.unstructure(params.edit))
                if self.never_answer_edits:
                    await self.released.wait()
                if self.refuse_edits_with is not None:
                    return types.ApplyWorkspaceEditResult(
                        applied=False, failure_reason=self.refuse_edits_with
                    )
                await self.apply(params.edit)
                return types.ApplyWorkspaceEditResult(applied=True)

        @client.feature("agent/confirmWorkspaceConfig")
        async def on_confirm_config(params: Any) -> dict[str, Any] | None:
            self.config_questions.append(client.protocol._converter.unstructure(params))
            self._signal.set()
            while self.apply_configs is None and not self.released.is_set():
                await asyncio.sleep(0.02)  # a test may decide once the editor has started
            if self.apply_configs is None:
                return None
            return {"apply": self.apply_configs}

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def on_message_request(
            params: types.ShowMessageRequestParams,
        ) -> types.MessageActionItem | None:
            self.message_requests.append(params)
            if self.answer_message_with is None:
                await self.released.wait()
                return None
            return types.MessageActionItem(title=self.answer_message_with)

    async def wait_applied(self, count: int = 1, timeout: float = 15.0) -> None:
        """Until the server says it applied `count` confirmed workspace config files."""

        async def poll() -> None:
            while sum("agentls: applied" in m.message for m in self.client.log_messages) < count:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(poll(), timeout)

    async def initialize(
        self, agent_options: dict[str, Any] | None = None
    ) -> types.InitializeResult:
        self.install_handlers()
        return await self.client.initialize_session(
            types.InitializeParams(
                capabilities=self.profile.capabilities(),
                root_uri=from_fs_path(str(self.root)),
                initialization_options={"agent": agent_options or {}},
            )
        )

    # ---- requests (request, new_session, prompt, wait_event: AgentClient) ----------------

    def start_request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Any]]:
        msg_id = next(self._ids)
        return msg_id, asyncio.wrap_future(
            self.client.protocol.send_request(method, params, msg_id=msg_id)
        )

    def cancel_request(self, msg_id: int) -> None:
        self.client.protocol.notify("$/cancelRequest", types.CancelParams(id=msg_id))

    async def wait_event(
        self,
        session_id: str,
        kind: str,
        count: int = 1,
        timeout: float = 60.0,  # noqa: ASYNC109
    ) -> dict[str, Any]:
        """AgentClient.wait_event, with room for a loaded machine: every event a test waits for
        comes or the test fails, and on a busy 2-core machine a turn's took over 15 s."""
        return await super().wait_event(session_id, kind, count, timeout)

    # ---- buffers ------------------------------------------------------------------------

    def uri(self, name: str) -> str:
        return str(from_fs_path(str(self.root / name)))

    def open(self, name: str, text: str | None = None) -> Buffer:
        path = self.root / name
        content = path.read_text() if text is None else text
        buffer = Buffer(path, content, 1, dirty=not path.exists() or path.read_text() != content)
        uri = self.uri(name)
        self.buffers[uri] = buffer
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language_id(path), version=1, text=content
                )
            )
        )
        return buffer

    def type_text(self, name: str, new_text: str) -> None:
        """The user edits the buffer without saving."""
        uri = self.uri(name)
        buffer = self.buffers[uri]
        buffer.version += 1
        buffer.text = new_text
        buffer.dirty = True
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=buffer.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )

    def save(self, uri: str) -> None:
        buffer = self.buffers[uri]
        buffer.path.write_text(buffer.text)
        buffer.dirty = False
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def apply(self, edit: types.WorkspaceEdit) -> None:
        changed: list[str] = []
        for change in edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                path = Path(to_fs_path(change.uri) or "")
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.exists():
                    path.write_text("")
            elif isinstance(change, types.DeleteFile):
                path = Path(to_fs_path(change.uri) or "")
                if self.buffers.pop(change.uri, None) is not None:  # VS Code closes its buffer
                    self.client.text_document_did_close(
                        types.DidCloseTextDocumentParams(
                            text_document=types.TextDocumentIdentifier(uri=change.uri)
                        )
                    )
                path.unlink(missing_ok=True)
            elif isinstance(change, types.TextDocumentEdit):
                self._edit(change.text_document.uri, list(change.edits))  # type: ignore[arg-type]
                changed.append(change.text_document.uri)
        for uri, edits in (edit.changes or {}).items():
            self._edit(uri, list(edits))
            changed.append(uri)
        for uri in changed:
            path = Path(to_fs_path(uri) or "")
            if path.name in self.diagnostics_after_edit:
                buffer = self.buffers.get(uri)
                version = buffer.version if buffer else None
                if self.stale_push_first and version is not None:
                    self.push_diagnostics(uri, [], version - 1)
                diagnostics = self.diagnostics_after_edit[path.name]
                if self.diagnostics_delay_s:
                    asyncio.get_running_loop().call_later(
                        self.diagnostics_delay_s, self.push_diagnostics, uri, diagnostics, version
                    )
                else:
                    self.push_diagnostics(uri, diagnostics, version)

    def _edit(self, uri: str, edits: list[types.TextEdit]) -> None:
        buffer = self.buffers.get(uri)
        if buffer is None:
            # Like VS Code: the file is opened in a background buffer, edited, left unsaved.
            path = Path(to_fs_path(uri) or "")
            text = path.read_text() if path.exists() else ""
            buffer = Buffer(path, text, 1)
            self.buffers[uri] = buffer
            self.client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=uri, language_id=language_id(path), version=1, text=text
                    )
                )
            )
        was_dirty = buffer.dirty
        buffer.text = apply_text_edits(buffer.text, edits)
        buffer.dirty = True
        buffer.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=buffer.version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=buffer.text)],
            )
        )
        if self.profile.saves_edits and not was_dirty:
            self.save(uri)

    def push_diagnostics(
        self, uri: str, diagnostics: list[dict[str, Any]], version: int | None
    ) -> None:
        params: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
        if version is not None:
            params["version"] = version
        self.client.protocol.notify("agent/diagnostics", params)


LANGUAGE_IDS = {".py": "python", ".md": "markdown", ".json": "json", ".yaml": "yaml"}


def language_id(path: Path) -> str:
    """The languageId an editor gives a file of this name."""
    return LANGUAGE_IDS.get(path.suffix, "plaintext")


def diag(line: int, message: str, severity: int = 1, source: str = "pyright") -> dict[str, Any]:
    return {
        "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 5}},
        "severity": severity,
        "source": source,
        "message": message,
    }


Matcher = Callable[[dict[str, Any]], bool]
