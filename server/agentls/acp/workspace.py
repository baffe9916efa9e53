"""The ACP editor's buffers as the agent's workspace, for clients that declare `fs.readTextFile` /
`fs.writeTextFile`: `read` asks the editor (unsaved changes included), an approved change is
written through the editor (it sees it, and can undo it). What the editor cannot do goes to the
disk: deleting a file (ACP has no request for it), reading or writing when the client declared
only one of the two, or when no session is running (nobody to ask).

ACP addresses the editor per session: each call names the session it is made for (the Agent
builds each session's workspace on agentls.verify.VerifiedWorkspace, which verifies every change).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from acp import RequestError

from agentls.config import Settings
from agentls.workspace.disk import BINARY_SNIFF_BYTES, DiskFiles
from agentls.workspace.folder_languages import FolderLanguages
from agentls.workspace.folders import Folders
from agentls.workspace.protocol import EditorDiagnostics, EditOutcome, FileChange, Languages

log = logging.getLogger(__name__)


class FileClient(Protocol):
    """The part of the ACP client connection this workspace uses (acp's AgentSideConnection)."""

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> Any: ...

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> Any: ...


class AcpWorkspace:
    """Raw access (FileAccess) to files through the ACP client's `fs/*` methods where it declared
    them, for the session a call is made for; the disk otherwise."""

    waited = "for approval"
    diagnostics: EditorDiagnostics | None = None

    def __init__(
        self,
        root: Path,
        client: FileClient,
        *,
        reads: bool,
        writes: bool,
        settings: Callable[[], Settings],
    ) -> None:
        self.root = Path(root).resolve()
        # Every workspace folder: the cwd, and session/new's additionalDirectories (acp/folders.py).
        self.folders = Folders.single(self.root)
        self.client = client
        self.reads = reads
        self.writes = writes
        self.disk = DiskFiles(self.root)
        # The session of the latest call: the language servers of `languageServers` read their
        # documents as its editor has them (a request to them names no session).
        self.latest: str | None = None
        self.languages: Languages = FolderLanguages(self.folders, settings, self._latest_text)

    async def _latest_text(self, path: Path) -> str:
        return await self.read_text(path, self.latest)

    async def read_text(self, path: Path, session: str | None = None) -> str:
        self.latest = session or self.latest
        if not self.reads or session is None:
            return await self.disk.read_text(path)
        try:
            response = await self.client.read_text_file(session_id=session, path=str(path))
        except (RequestError, ConnectionError) as exc:
            # Not a file the editor has (missing, a directory, binary): the disk says what it is.
            log.debug("fs/read_text_file %s failed (%s): reading the disk", path, exc)
            return await self.disk.read_text(path)
        text = str(response.content)
        nul = text.find("\0", 0, BINARY_SNIFF_BYTES)
        if nul >= 0:
            raise UnicodeDecodeError("utf-8", b"\0", 0, 1, "binary file (NUL byte)")
        return text

    async def current_text(self, path: Path, session: str | None = None) -> str | None:
        """The file's text now as the editor has it; None when it does not exist."""
        try:
            return await self.read_text(path, session)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IsADirectoryError:
            raise
        except (OSError, UnicodeDecodeError):
            return "\0(not a text file)"

    async def write_text(
        self, path: Path, new_text: str, old_text: str | None, session: str | None = None
    ) -> EditOutcome:
        self.latest = session or self.latest
        if not self.writes or session is None:
            return await self.disk.write_text(path, new_text, old_text)
        try:
            await self.client.write_text_file(session_id=session, path=str(path), content=new_text)
        except (RequestError, ConnectionError) as exc:
            return EditOutcome(applied=False, reason=f"the editor did not write {path}: {exc}")
        return EditOutcome(applied=True)

    async def apply_all(
        self, changes: Sequence[FileChange], session: str | None = None
    ) -> list[EditOutcome] | None:
        return None  # ACP has no edit of several files: one by one

    async def delete(self, path: Path, session: str | None = None) -> EditOutcome:
        return await self.disk.delete(path)  # ACP has no request for it: the disk
