"""The seams between the tools and the front end's files: `Workspace`, what the tools read and
write through (agentls.verify.VerifiedWorkspace: each change checked and verified), and
`FileAccess`, the raw access a front end implements (the disk, an editor's buffers); plus what a
change came to (EditOutcome)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

# Defined below workspace/ (language/ imports nothing of it), named here with the seam.
from agentls.language.errors import LanguageUnavailable as LanguageUnavailable


@dataclass
class Reach:
    """What a change did to other files (agentls.verify.reach): the changed definitions it
    followed, how many files using them it compared, and the files with new errors (LSP
    diagnostics). A tool shows only the files the model may see."""

    definitions: list[str]
    compared: int
    broken: list[tuple[Path, list[dict[str, Any]]]] = field(default_factory=list)


@dataclass
class EditOutcome:
    """What happened when the workspace applied a change to one file."""

    applied: bool
    reason: str | None = None  # why not, when applied is False
    # Notes for the model (e.g. "the buffer has unsaved changes: commands see the saved version").
    notes: list[str] = field(default_factory=list)
    # The verification summary to append to the tool result (agentls.verify): the new problems
    # the change introduced, or that there are none. None when nothing checked the file.
    diagnostics: str | None = None
    # The new errors in other files that use a definition the change changed; None when nothing
    # was followed (no language server answers references for the file).
    reach: Reach | None = None
    # The editor's document version after the change (the one its pushed diagnostics answer);
    # None when no editor buffer took it.
    version: int | None = None
    # The text written when it is not the change's own: the user changed other lines of the file
    # while the change waited, and the change was merged into them (workspace/merge.py).
    merged: str | None = None


@dataclass(frozen=True)
class FileChange:
    """One file's part of a change to several files (a rename across files, a revert)."""

    path: Path
    new_text: str  # ignored when delete
    old_text: str | None  # what the change was made from; None: a new file
    # Delete the file (a revert of a file the agent created); old_text is what it must still be.
    delete: bool = False


class Languages(Protocol):
    """The language servers a workspace can ask (agentls.language): the editor's own, through
    `agent/languageRequest`, when the client declares the method; otherwise servers agentls starts
    itself from the `languageServers` setting."""

    def methods(self, path: Path | None) -> frozenset[str]:
        """The LSP methods something can answer for this file (None: workspace-wide methods such
        as workspace/symbol)."""
        ...

    async def request(self, method: str, params: dict[str, Any], path: Path | None) -> Any:
        """The standard LSP result of `method` (plain JSON, as on the wire; None when the server
        has none) for the document at `path` (opened first where needed) or the workspace.
        Raises LanguageUnavailable."""
        ...

    async def aclose(self) -> None:
        """Stop what was started (language servers agentls runs itself)."""
        ...


class Workspace(Protocol):
    """Where the tools' files live: agentls.verify.VerifiedWorkspace on a front end's FileAccess
    (the disk's, DiskFiles; an editor's buffers, LspWorkspace, AcpWorkspace)."""

    @property
    def root(self) -> Path: ...

    @property
    def languages(self) -> Languages: ...

    async def read_text(self, path: Path) -> str:
        """Current text of a file (an open buffer's unsaved text wins). Raises FileNotFoundError,
        IsADirectoryError, or UnicodeDecodeError (binary)."""
        ...

    async def write_text(self, path: Path, new_text: str, old_text: str | None) -> EditOutcome:
        """Replace the file's whole text (create it when old_text is None). Not applied when the
        file is no longer old_text (see agentls.workspace.changed)."""
        ...

    async def write_all(self, changes: Sequence[FileChange]) -> list[EditOutcome]:
        """Apply changes to several files as one edit (in the editor: one workspace edit, one
        undo), all or none: when any file is no longer its old_text, nothing is applied and
        every outcome says why. One outcome per change, in order."""
        ...

    async def delete(self, path: Path) -> EditOutcome:
        """Delete a file (revert of a file the agent created); applied when it does not exist."""
        ...


# An editor's diagnostics of a document, as it pushes them: (uri, version, diagnostics, languageId).
PushReceiver = Callable[[str, int | None, list[dict[str, Any]], str | None], Awaitable[None]]


class EditorDiagnostics(Protocol):
    """An editor's own diagnostics source (the language server front end's agent/diagnostics)."""

    def pushes(self) -> bool:
        """Whether the editor pushes its diagnostics (else agentls' checks stand in)."""
        ...

    def language_id(self, path: Path) -> str | None:
        """The languageId of the file's open document (None: not open, or not said)."""
        ...

    def publish(self, path: Path, diagnostics: list[dict[str, Any]]) -> None:
        """Show agentls' own diagnostics of an edited file in the editor."""
        ...

    def listen(self, receive: PushReceiver) -> None:
        """Hand every push from now on to `receive`."""
        ...


class FileAccess(Protocol):
    """What a front end implements: raw access to its files, nothing checked or verified (that is
    agentls.verify.VerifiedWorkspace's, the same for every front end). `session` is the front
    end's session the call is made for (an ACP editor is addressed per session); None: none.

    `waited` words what a change may have waited for ("for approval"), in the reason a change to a
    file that changed meanwhile is refused. `diagnostics` is the editor's diagnostics source, where
    there is one."""

    @property
    def root(self) -> Path: ...

    @property
    def languages(self) -> Languages: ...

    @property
    def waited(self) -> str: ...

    @property
    def diagnostics(self) -> EditorDiagnostics | None: ...

    async def read_text(self, path: Path, session: str | None = None) -> str:
        """As Workspace.read_text."""
        ...

    async def current_text(self, path: Path, session: str | None = None) -> str | None:
        """The text a change must still find: None when the file does not exist, a text no edit
        starts from when it is not a text file. Raises IsADirectoryError."""
        ...

    async def write_text(
        self, path: Path, new_text: str, old_text: str | None, session: str | None = None
    ) -> EditOutcome:
        """Write the whole text (old_text: what it is now, None: a new file); applied or why not,
        with notes and the editor's document version."""
        ...

    async def delete(self, path: Path, session: str | None = None) -> EditOutcome:
        """As Workspace.delete."""
        ...

    async def apply_all(
        self, changes: Sequence[FileChange], session: str | None = None
    ) -> list[EditOutcome] | None:
        """The changes as one edit, all or none, where the front end can natively (an editor's
        WorkspaceEdit); None where it cannot (then they are written one by one and put back on a
        failure)."""
        ...
