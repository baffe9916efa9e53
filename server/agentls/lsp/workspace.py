"""The editor's buffers as the agent's workspace: reads see unsaved text, writes are WorkspaceEdits.

Rules (the user's unsaved work is never overwritten on disk):
- An open buffer is the truth for `read`.
- A change becomes a `workspace/applyEdit` when the client can apply edits; the editor applies it to
  the buffer, so it lands on the user's undo stack.
- If the buffer held no unsaved user changes, disk ends equal to the buffer: a client that declared
  `savesEdits` saves it, otherwise the server writes it through, so `bash` sees the edit.
- If it held unsaved user changes, the server never writes to disk, and says so to the model.
- A client without applyEdit gets direct writes, except to a buffer with unsaved changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace import TextDocument

from agentls.atomic_file import replace_file
from agentls.config import Settings
from agentls.lsp.annotations import SessionTitle, annotated, label_for
from agentls.lsp.capabilities import ClientCaps
from agentls.lsp.textedit import hunk_edits, minimal_edit
from agentls.workspace.disk import DiskFiles, read_text_file
from agentls.workspace.folders import Folders
from agentls.workspace.protocol import EditOutcome, FileChange, Languages, PushReceiver

log = logging.getLogger(__name__)

SAVE_WAIT_S = 2.0
BUFFER_SYNC_WAIT_S = 1.0


def uri_of(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return str(uri)


def relative_name(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _read_disk(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write_disk(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode: int | None
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None  # a new file: the umask's mode, as the editor or DiskWorkspace gives
    replace_file(path, text.encode("utf-8"), mode)


ApplyEdit = Callable[[types.ApplyWorkspaceEditParams], Awaitable[types.ApplyWorkspaceEditResult]]
PublishDiagnostics = Callable[[str, list[dict[str, Any]]], None]


class LspWorkspace:
    """Raw access (FileAccess) to the language server's documents: the editor's buffers, and
    the disk under them. Each change is checked and verified by agentls.verify.VerifiedWorkspace
    (the Agent builds it on this); the editor's pushed diagnostics are its diagnostics source.

    It reaches the editor through callbacks: `documents` (the open document of a uri, or None),
    `caps` (what the client can do), `settings` (those in force), `apply_edit`
    (workspace/applyEdit) and `publish_diagnostics` (agentls' own checks of an edited file).
    `languages` are the language servers the tools ask (lsp/language.py: the editor's own)."""

    waited = "(for approval or in the editor)"

    def __init__(
        self,
        root: Path,
        *,
        documents: Callable[[str], TextDocument | None],
        caps: Callable[[], ClientCaps],
        settings: Callable[[], Settings],
        apply_edit: ApplyEdit,
        publish_diagnostics: PublishDiagnostics,
        languages: Languages,
        folders: Folders | None = None,
    ) -> None:
        self.root = root
        # Every workspace folder (workspace/folders.py), shared with the server, which changes it.
        self.folders = folders or Folders.single(root)
        self.languages = languages
        self.documents = documents
        self.caps = caps
        self.settings = settings
        self.apply_edit = apply_edit
        # The title of a session, for the annotation of its edits (set by the server).
        self.session_title: SessionTitle | None = None
        self.publish_diagnostics = publish_diagnostics
        self.diagnostics = self  # the editor's diagnostics source (EditorDiagnostics)
        self._receivers: list[PushReceiver] = []
        self._doc_changed: dict[str, asyncio.Event] = {}
        self._saved: dict[str, asyncio.Event] = {}

    # ---- notifications from the server's document handlers ------------------------------

    def document_changed(self, uri: str) -> None:
        event = self._doc_changed.pop(uri, None)
        if event is not None:
            event.set()

    def document_saved(self, uri: str) -> None:
        event = self._saved.pop(uri, None)
        if event is not None:
            event.set()

    # ---- reading ------------------------------------------------------------------------

    def open_document(self, path: Path) -> TextDocument | None:
        return self.documents(uri_of(path))

    async def read_text(self, path: Path, session: str | None = None) -> str:
        doc = self.open_document(path)
        if doc is not None:
            return str(doc.source)
        # Regular files only: /dev/zero or a FIFO would never end.
        return await asyncio.to_thread(read_text_file, path)

    async def current_text(self, path: Path, session: str | None = None) -> str | None:
        doc = self.open_document(path)
        if doc is not None:
            return str(doc.source)
        return await asyncio.to_thread(DiskFiles.text_now, path)

    async def _dirty(self, path: Path) -> bool:
        """Whether the file's open buffer holds text the disk has not (unsaved changes)."""
        doc = self.open_document(path)
        return doc is not None and await asyncio.to_thread(_read_disk, path) != str(doc.source)

    # ---- writing ------------------------------------------------------------------------

    async def write_text(
        self, path: Path, new_text: str, old_text: str | None, session: str | None = None
    ) -> EditOutcome:
        uri = uri_of(path)
        dirty = await self._dirty(path)
        caps = self.caps()
        notes: list[str] = []

        if not caps.apply_edit:
            if dirty:
                return EditOutcome(
                    applied=False,
                    reason=(
                        "The file has unsaved changes in the editor, and this editor cannot apply "
                        "workspace edits; the change was not made. Ask the user to save or close it."
                    ),
                )
            await asyncio.to_thread(_write_disk, path, new_text)
            notes.append("Written to disk directly (this editor does not apply workspace edits).")
            return EditOutcome(applied=True, notes=notes)

        if old_text is None and not (caps.document_changes and caps.create_files):
            # A new file, and a client that cannot create one through an edit.
            await asyncio.to_thread(_write_disk, path, new_text)
            return EditOutcome(applied=True, notes=notes)

        edit = self.build_edit(path, new_text, old_text)
        waiter = asyncio.Event()
        self._doc_changed[uri] = waiter
        timeout_s = self.settings().apply_edit_timeout_s
        try:
            result = await asyncio.wait_for(
                self._send(edit, f"agentls: {path.name}", session), timeout_s
            )
        except TimeoutError:
            self._doc_changed.pop(uri, None)
            return EditOutcome(
                applied=False,
                reason=f"The editor did not answer workspace/applyEdit within {timeout_s:.0f} s; the change may not have been made. Read the file again.",
            )
        if not result.applied:
            self._doc_changed.pop(uri, None)
            reason = result.failure_reason or "no reason given"
            return EditOutcome(applied=False, reason=f"The editor refused the edit: {reason}")

        # Wait (briefly) for the buffer to reflect the edit, so the next read sees it.
        doc = self.open_document(path)
        if doc is not None and str(doc.source) != new_text:
            try:
                await asyncio.wait_for(waiter.wait(), BUFFER_SYNC_WAIT_S)
            except TimeoutError:
                pass
        self._doc_changed.pop(uri, None)

        if dirty:
            notes.append(
                "The file has unsaved changes in the editor: the edit was applied to the editor's "
                "buffer, but the file on disk was left as the user saved it, so commands (bash) see "
                "the saved version until the user saves."
            )
        else:
            await self._sync_disk(path, uri, new_text)
        return EditOutcome(applied=True, notes=notes, version=self._version(path))

    async def apply_all(
        self, changes: Sequence[FileChange], session: str | None = None
    ) -> list[EditOutcome] | None:
        """Several files as ONE workspace/applyEdit (one undo in the editor): each open buffer's
        edit carries its version, so the editor refuses the whole edit if one moved meanwhile. A
        buffer with unsaved changes is edited but never written to disk. None for a client that
        cannot apply edits (the files are then written one by one), unless a buffer has unsaved
        changes: then nothing is."""
        dirty = [await self._dirty(change.path) for change in changes]
        caps = self.caps()
        if not caps.apply_edit:
            if not any(dirty):
                return None
            names = ", ".join(
                relative_name(c.path, self.root) for c, d in zip(changes, dirty, strict=True) if d
            )
            return self._none_applied(
                changes,
                f"{names} has unsaved changes in the editor, and this editor cannot apply "
                "workspace edits; nothing was changed. Ask the user to save or close it.",
            )
        refused = await self._apply_all(changes, session)
        if refused is not None:
            return self._none_applied(changes, refused)
        outcomes: list[EditOutcome] = []
        for change, is_dirty in zip(changes, dirty, strict=True):
            notes: list[str] = []
            if change.delete:  # gone already when the editor took a DeleteFile
                await asyncio.to_thread(change.path.unlink, missing_ok=True)
            elif change.old_text is None and not (caps.document_changes and caps.create_files):
                await asyncio.to_thread(_write_disk, change.path, change.new_text)
            elif is_dirty:
                notes.append(
                    "The file has unsaved changes in the editor: the edit was applied to the "
                    "editor's buffer, but the file on disk was left as the user saved it."
                )
            else:
                await self._sync_disk(change.path, uri_of(change.path), change.new_text)
            outcomes.append(
                EditOutcome(applied=True, notes=notes, version=self._version(change.path))
            )
        return outcomes

    def _version(self, path: Path) -> int | None:
        doc = self.open_document(path)
        return doc.version if doc is not None else None

    @staticmethod
    def _none_applied(changes: Sequence[FileChange], reason: str) -> list[EditOutcome]:
        return [EditOutcome(applied=False, reason=reason) for _ in changes]

    async def _apply_all(self, changes: Sequence[FileChange], session: str | None) -> str | None:
        """Send the one workspace/applyEdit of `changes` and wait for the buffers to show it;
        None when applied, else why not."""
        caps = self.caps()
        edit = types.WorkspaceEdit()
        for change in changes:
            if change.delete:  # without DeleteFile in the client: deleted on disk after the edit
                if caps.document_changes and caps.delete_files:
                    gone = types.DeleteFile(uri=uri_of(change.path))
                    edit.document_changes = [*(edit.document_changes or []), gone]
                continue
            if change.old_text is None and not (caps.document_changes and caps.create_files):
                continue  # written to disk after the edit, as write_text does
            one = self.build_edit(change.path, change.new_text, change.old_text)
            if one.document_changes is not None:
                edit.document_changes = [*(edit.document_changes or []), *one.document_changes]
            if one.changes is not None:
                edit.changes = {**(edit.changes or {}), **one.changes}
        waiters: dict[str, asyncio.Event] = {}
        for change in changes:
            waiters[uri_of(change.path)] = self._doc_changed[uri_of(change.path)] = asyncio.Event()
        timeout_s = self.settings().apply_edit_timeout_s
        label = f"agentls: {len(changes)} files"
        try:
            result = await asyncio.wait_for(self._send(edit, label, session), timeout_s)
        except TimeoutError:
            result = None
        if result is None or not result.applied:
            for uri in waiters:
                self._doc_changed.pop(uri, None)
            if result is None:
                return (
                    f"The editor did not answer workspace/applyEdit within {timeout_s:.0f} s; "
                    "the change may not have been made. Read the files again."
                )
            return f"The editor refused the edit: {result.failure_reason or 'no reason given'}"
        for change in changes:
            uri = uri_of(change.path)
            doc = self.open_document(change.path)
            if doc is not None and not change.delete and str(doc.source) != change.new_text:
                try:
                    await asyncio.wait_for(waiters[uri].wait(), BUFFER_SYNC_WAIT_S)
                except TimeoutError:
                    pass
            self._doc_changed.pop(uri, None)
        return None

    async def delete(self, path: Path, session: str | None = None) -> EditOutcome:
        caps = self.caps()
        uri = uri_of(path)
        if caps.apply_edit and caps.document_changes and caps.delete_files:
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.DeleteFile(
                        uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True)
                    )
                ]
            )
            result = await asyncio.wait_for(
                self._send(edit, "agentls: revert", session),
                self.settings().apply_edit_timeout_s,
            )
            if not result.applied:
                return EditOutcome(
                    applied=False, reason=result.failure_reason or "the editor refused"
                )
        if path.exists():
            await asyncio.to_thread(path.unlink)
        return EditOutcome(applied=True)

    async def _send(
        self, edit: types.WorkspaceEdit, label: str, session: str | None
    ) -> types.ApplyWorkspaceEditResult:
        """The workspace/applyEdit of `edit`, annotated with the session's title where the client
        supports change annotations (lsp/annotations.py)."""
        if self.caps().change_annotations:
            title = await self.session_title(session) if self.session_title else None
            edit = annotated(edit, label_for(title))
        return await self.apply_edit(types.ApplyWorkspaceEditParams(edit=edit, label=label))

    def build_edit(
        self, path: Path, new_text: str, old_text: str | None, *, per_hunk: bool = False
    ) -> types.WorkspaceEdit:
        """The WorkspaceEdit for a change, shaped by what the client supports. Applied, a change
        to an existing file is the one minimal TextEdit; proposed (`per_hunk`), it is one TextEdit
        per hunk (workspace/hunks.py), in order, each replacing whole lines, so a client can
        accept some of them (agent/approve's `edit`)."""
        uri = uri_of(path)
        caps = self.caps()
        encoding = caps.position_encoding
        if old_text is None:
            insert = types.TextEdit(
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=0, character=0),
                ),
                new_text=new_text,
            )
            if caps.document_changes and caps.create_files:
                return types.WorkspaceEdit(
                    document_changes=[
                        types.CreateFile(
                            uri=uri,
                            options=types.CreateFileOptions(overwrite=False, ignore_if_exists=True),
                        ),
                        types.TextDocumentEdit(
                            text_document=types.OptionalVersionedTextDocumentIdentifier(
                                uri=uri, version=None
                            ),
                            edits=[insert],
                        ),
                    ]
                )
            return types.WorkspaceEdit(changes={uri: [insert]})
        text_edits = (
            hunk_edits(old_text, new_text, encoding)
            if per_hunk
            else [minimal_edit(old_text, new_text, encoding)]
        )
        if caps.document_changes:
            doc = self.open_document(path)
            version = doc.version if doc is not None else None
            return types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(
                            uri=uri, version=version
                        ),
                        edits=list(text_edits),
                    )
                ]
            )
        return types.WorkspaceEdit(changes={uri: list(text_edits)})

    async def _sync_disk(self, path: Path, uri: str, new_text: str) -> None:
        """Make disk equal the (clean) buffer: the client saves it, or we write it through."""
        if await asyncio.to_thread(_read_disk, path) == new_text:
            return  # saved already: a client may save before it answers workspace/applyEdit
        if self.caps().agent.saves_edits and self.open_document(path) is not None:
            saved = asyncio.Event()
            self._saved[uri] = saved
            try:
                await asyncio.wait_for(saved.wait(), SAVE_WAIT_S)
            except TimeoutError:
                log.info("no didSave for %s within %.1f s; writing through", uri, SAVE_WAIT_S)
            finally:
                self._saved.pop(uri, None)
        if await asyncio.to_thread(_read_disk, path) != new_text:
            await asyncio.to_thread(_write_disk, path, new_text)

    # ---- the editor's diagnostics (EditorDiagnostics) ---------------------------------

    def pushes(self) -> bool:
        return self.caps().agent.diagnostics_push

    def language_id(self, path: Path) -> str | None:
        doc = self.open_document(path)
        return doc.language_id if doc is not None else None

    def publish(self, path: Path, diagnostics: list[dict[str, Any]]) -> None:
        self.publish_diagnostics(uri_of(path), diagnostics)

    def listen(self, receive: PushReceiver) -> None:
        self._receivers.append(receive)

    async def diagnostics_pushed(
        self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]
    ) -> None:
        """agent/diagnostics: the editor's diagnostics of a document, with its languageId."""
        doc = self.documents(uri)
        for receive in self._receivers:
            await receive(uri, version, diagnostics, doc.language_id if doc else None)
