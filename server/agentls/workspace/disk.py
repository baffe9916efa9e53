"""Raw access to the plain filesystem (the CLI's, and the tests'): text files read, and written
atomically. agentls.verify.workspace.DiskWorkspace verifies each write on it."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from agentls.atomic_file import replace_file
from agentls.config import Settings
from agentls.language import NoLanguages
from agentls.workspace.folder_languages import FolderLanguages
from agentls.workspace.folders import Folders
from agentls.workspace.protocol import EditorDiagnostics, EditOutcome, FileChange, Languages

# A NUL byte this early means binary, even when the bytes happen to decode.
BINARY_SNIFF_BYTES = 8192


def decode_text(data: bytes) -> str:
    """UTF-8 text of a file's bytes; raises UnicodeDecodeError for binary (NUL byte early on, or
    not UTF-8)."""
    nul = data.find(b"\0", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        raise UnicodeDecodeError("utf-8", data[: nul + 1], nul, nul + 1, "binary file (NUL byte)")
    return data.decode("utf-8")


def read_text_file(path: Path, max_bytes: int | None = None) -> str:
    """A regular file's UTF-8 text. Raises IsADirectoryError, FileNotFoundError, or
    UnicodeDecodeError for what is not text: a device, FIFO or socket (which could block or never
    end), a NUL byte early on (checked before the rest is read), invalid UTF-8, or, with
    max_bytes, a file bigger than that."""
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "is a directory", str(path))
    if not stat.S_ISREG(info.st_mode):
        raise UnicodeDecodeError("utf-8", b"", 0, 1, "not a regular file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise UnicodeDecodeError("utf-8", b"", 0, 1, f"larger than {max_bytes} bytes")
    with open(path, "rb") as f:
        head = f.read(BINARY_SNIFF_BYTES)
        if b"\0" in head:
            decode_text(head)  # raises: a binary file is not read any further
        data = head + f.read()
    return decode_text(data)


class DiskFiles:
    """Raw access to the files on disk (FileAccess): writes are atomic (temp file + rename in the
    same directory). Nothing is verified here (agentls.verify.VerifiedWorkspace does it).

    `languages`: the language servers of the `languageServers` setting (`settings`, a getter of
    the settings in force), started by agentls on first use (NoLanguages without settings)."""

    waited = "for approval"
    diagnostics: EditorDiagnostics | None = None

    def __init__(
        self,
        root: Path,
        settings: Callable[[], Settings] | None = None,
        folders: Folders | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        # Every workspace folder (workspace/folders.py); `root` is the first.
        self.folders = folders or Folders.single(self.root)
        self.languages: Languages = (
            FolderLanguages(self.folders, settings, self.read_text)
            if settings is not None
            else NoLanguages()
        )

    async def read_text(self, path: Path, session: str | None = None) -> str:
        return await asyncio.to_thread(self._read, path)

    async def current_text(self, path: Path, session: str | None = None) -> str | None:
        return await asyncio.to_thread(self.text_now, path)

    async def write_text(
        self, path: Path, new_text: str, old_text: str | None, session: str | None = None
    ) -> EditOutcome:
        try:
            await asyncio.to_thread(self._write, path, new_text)
        except UnicodeEncodeError as exc:
            return EditOutcome(applied=False, reason=f"the text cannot be encoded as UTF-8: {exc}")
        except OSError as exc:
            detail = exc.strerror or str(exc)
            return EditOutcome(applied=False, reason=f"could not write {path}: {detail}")
        return EditOutcome(applied=True)

    async def apply_all(
        self, changes: Sequence[FileChange], session: str | None = None
    ) -> list[EditOutcome] | None:
        return None  # a filesystem has no all-or-none write of several files

    async def delete(self, path: Path, session: str | None = None) -> EditOutcome:
        try:
            await asyncio.to_thread(path.unlink, missing_ok=True)
        except IsADirectoryError:
            return EditOutcome(applied=False, reason=f"could not delete {path}: it is a directory")
        except OSError as exc:
            detail = exc.strerror or str(exc)
            return EditOutcome(applied=False, reason=f"could not delete {path}: {detail}")
        return EditOutcome(applied=True)

    @staticmethod
    def _read(path: Path) -> str:
        return read_text_file(path)

    @classmethod
    def text_now(cls, path: Path) -> str | None:
        """The file's text now; None when it does not exist (or is not a readable text file,
        which then never equals an old_text)."""
        try:
            return cls._read(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IsADirectoryError:
            raise
        except (OSError, UnicodeDecodeError):
            return "\0(not a text file)"

    @staticmethod
    def _write(path: Path, text: str) -> None:
        data = text.encode("utf-8")
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None
        if target.is_dir():
            raise IsADirectoryError(21, "is a directory", str(target))
        replace_file(target, data, mode)
