"""The ACP editor's buffers as the agent's workspace, for clients that declare `fs.readTextFile` /
`fs.writeTextFile`: `read` asks the editor (unsaved changes included), an approved change is
written through the editor (it sees it, and can undo it). What the editor cannot do goes to the
disk: deleting a file (ACP has no request for it), reading or writing when the client declared
only one of the two, or when no session is running (nobody to ask).

ACP addresses the editor per session; the session of the running turn is `current_session`,
set by the front end before Agent.prompt (the turn's task, and each tool call's, inherit it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from acp import RequestError

from agentls.config import Settings
from agentls.language.headless import HeadlessLanguages
from agentls.verify.edit import Verifier
from agentls.verify.reach import reach_before
from agentls.verify.served import served_after, served_before
from agentls.workspace.changed import changed_while_waiting
from agentls.workspace.disk import BINARY_SNIFF_BYTES, DiskWorkspace
from agentls.workspace.protocol import EditOutcome, FileChange, Languages

log = logging.getLogger(__name__)

# The ACP session whose turn is running in this task (see the module's docstring).
current_session: ContextVar[str | None] = ContextVar("agentls_acp_session", default=None)


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
    """Files through the ACP client's `fs/*` methods where it declared them, the disk otherwise."""

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
        self.client = client
        self.reads = reads
        self.writes = writes
        self.disk = DiskWorkspace(self.root, settings)
        self.verifier = Verifier(self.root, settings)
        # The language servers of `languageServers`, their documents read from the editor.
        self.languages: Languages = HeadlessLanguages(self.root, settings, self.read_text)

    async def read_text(self, path: Path) -> str:
        session_id = current_session.get()
        if not self.reads or session_id is None:
            return await self.disk.read_text(path)
        try:
            response = await self.client.read_text_file(session_id=session_id, path=str(path))
        except (RequestError, ConnectionError) as exc:
            # Not a file the editor has (missing, a directory, binary): the disk says what it is.
            log.debug("fs/read_text_file %s failed (%s): reading the disk", path, exc)
            return await self.disk.read_text(path)
        text = str(response.content)
        nul = text.find("\0", 0, BINARY_SNIFF_BYTES)
        if nul >= 0:
            raise UnicodeDecodeError("utf-8", b"\0", 0, 1, "binary file (NUL byte)")
        return text

    async def _current(self, path: Path) -> str | None:
        """The file's text now as the editor has it; None when it does not exist."""
        try:
            return await self.read_text(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IsADirectoryError:
            raise
        except (OSError, UnicodeDecodeError):
            return "\0(not a text file)"

    async def write_text(self, path: Path, new_text: str, old_text: str | None) -> EditOutcome:
        session_id = current_session.get()
        if not self.writes or session_id is None:
            return await self.disk.write_text(path, new_text, old_text)
        try:
            current = await self._current(path)
        except IsADirectoryError:
            return EditOutcome(applied=False, reason=f"could not write {path}: it is a directory")
        changed = changed_while_waiting(old_text, current)
        if changed is not None:
            return EditOutcome(applied=False, reason=changed)
        # What uses the definitions this edit changes, looked for before it lands (verify/reach).
        reach = await reach_before(self, path, path.as_uri(), old_text, new_text)
        outcome = await self._write(session_id, path, new_text, old_text)
        if outcome.applied and reach is not None:
            outcome.reach = await reach.report()
        return outcome

    async def _write(
        self, session_id: str, path: Path, new_text: str, old_text: str | None
    ) -> EditOutcome:
        before = await self.verifier.before(path, old_text)
        # A configured language server's diagnostics of the file (names, types, lint), before.
        served = await served_before(self.languages, path, old_text)
        try:
            await self.client.write_text_file(
                session_id=session_id, path=str(path), content=new_text
            )
        except (RequestError, ConnectionError) as exc:
            return EditOutcome(applied=False, reason=f"the editor did not write {path}: {exc}")
        diagnostics = None
        if self.verifier.applies_to(path):
            diagnostics = await self.verifier.after(path, new_text, before)
        diagnostics = await served_after(self.languages, path, self.root, served, diagnostics)
        return EditOutcome(applied=True, diagnostics=diagnostics)

    async def write_all(self, changes: Sequence[FileChange]) -> list[EditOutcome]:
        session_id = current_session.get()
        # All or none: every file is checked before any is written.
        for change in changes:
            try:
                current = await self._current(change.path)
            except IsADirectoryError:
                current = "\0(a directory)"
            reason = changed_while_waiting(change.old_text, current)
            if reason is not None:
                why = f"{change.path}: {reason}; nothing of the change was applied"
                return [EditOutcome(applied=False, reason=why) for _ in changes]
        outcomes: list[EditOutcome] = []
        for index, change in enumerate(changes):
            outcome = await self._apply(session_id, change)
            if not outcome.applied:
                for done in reversed(changes[:index]):
                    await self._put_back(session_id, done)
                why = f"{change.path}: {outcome.reason}; nothing of the change was applied"
                return [EditOutcome(applied=False, reason=why) for _ in changes]
            outcomes.append(outcome)
        return outcomes

    async def _apply(self, session_id: str | None, change: FileChange) -> EditOutcome:
        if change.delete:  # ACP has no request for it: the disk
            return await self.disk.delete(change.path)
        if not self.writes or session_id is None:
            return await self.disk.write_text(change.path, change.new_text, change.old_text)
        return await self._write(session_id, change.path, change.new_text, change.old_text)

    async def _put_back(self, session_id: str | None, change: FileChange) -> None:
        """Undo an applied change of a write_all that failed further on."""
        if change.old_text is None:
            await self.disk.delete(change.path)
            return
        undo = FileChange(change.path, change.old_text, None if change.delete else change.new_text)
        outcome = await self._apply(session_id, undo)
        if not outcome.applied:
            log.warning("could not put %s back: %s", change.path, outcome.reason)

    async def delete(self, path: Path) -> EditOutcome:
        return await self.disk.delete(path)
