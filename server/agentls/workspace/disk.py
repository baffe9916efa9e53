"""The Workspace on the plain filesystem (the CLI's, and the tests'): text files read and written
atomically, each write verified (agentls.verify) so the model hears what it broke."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from agentls.config import Settings
from agentls.language import NoLanguages
from agentls.language.headless import HeadlessLanguages
from agentls.verify.edit import Verifier
from agentls.verify.reach import reach_before
from agentls.verify.served import served_after, served_before
from agentls.workspace.changed import changed_while_waiting
from agentls.workspace.protocol import EditOutcome, FileChange, Languages

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


def _not_applied(reason: str | None) -> EditOutcome:
    why = reason or "another file of the same change had changed, so none was written"
    return EditOutcome(applied=False, reason=why)


class DiskWorkspace:
    """Files are what is on disk; writes are atomic (temp file + rename in the same directory).

    After a write, agentls' own checks (Python, JSON) of the text before and after, and the
    verifyCommands of `settings` (a getter: the settings in force; none without it), report the
    problems the change introduced in EditOutcome.diagnostics, for files something checks.

    `languages`: the language servers of the `languageServers` setting, started by agentls on
    first use (NoLanguages without settings)."""

    def __init__(self, root: Path, settings: Callable[[], Settings] | None = None) -> None:
        self.root = Path(root).resolve()
        self.verifier = Verifier(self.root, settings)
        self.languages: Languages = (
            HeadlessLanguages(self.root, settings, self.read_text)
            if settings is not None
            else NoLanguages()
        )

    async def read_text(self, path: Path) -> str:
        return await asyncio.to_thread(self._read, path)

    async def write_text(self, path: Path, new_text: str, old_text: str | None) -> EditOutcome:
        # old_text is what the change was made from; an approval may have kept it waiting since.
        try:
            current = await asyncio.to_thread(self._current, path)
        except IsADirectoryError:
            return EditOutcome(applied=False, reason=f"could not write {path}: it is a directory")
        changed = changed_while_waiting(old_text, current)
        if changed is not None:
            return EditOutcome(applied=False, reason=changed)
        before = await self.verifier.before(path, old_text)
        # A configured language server's diagnostics of the file (names, types, lint), before.
        served = await served_before(self.languages, path, old_text)
        reach = await reach_before(self, path, path.as_uri(), old_text, new_text)
        try:
            await asyncio.to_thread(self._write, path, new_text)
        except UnicodeEncodeError as exc:
            return EditOutcome(applied=False, reason=f"the text cannot be encoded as UTF-8: {exc}")
        except OSError as exc:
            detail = exc.strerror or str(exc)
            return EditOutcome(applied=False, reason=f"could not write {path}: {detail}")
        diagnostics = None
        if self.verifier.applies_to(path):
            diagnostics = await self.verifier.after(path, new_text, before)
        diagnostics = await served_after(self.languages, path, self.root, served, diagnostics)
        reached = await reach.report() if reach is not None else None
        return EditOutcome(applied=True, diagnostics=diagnostics, reach=reached)

    async def write_all(self, changes: Sequence[FileChange]) -> list[EditOutcome]:
        """Every file checked first (each still its old_text, none a directory), then written;
        a write that fails puts back the files written before it, so it is all or none."""
        reasons: list[str | None] = []
        for change in changes:
            try:
                current = await asyncio.to_thread(self._current, change.path)
            except IsADirectoryError:
                reasons.append(f"could not write {change.path}: it is a directory")
                continue
            reasons.append(changed_while_waiting(change.old_text, current))
        if any(reasons):
            return [_not_applied(reason) for reason in reasons]
        befores = [await self.verifier.before(c.path, c.old_text) for c in changes]
        written: list[FileChange] = []
        for change in changes:
            try:
                if change.delete:
                    await asyncio.to_thread(change.path.unlink, missing_ok=True)
                else:
                    await asyncio.to_thread(self._write, change.path, change.new_text)
            except (OSError, UnicodeEncodeError) as exc:
                detail = getattr(exc, "strerror", None) or str(exc)
                for done in reversed(written):
                    with contextlib.suppress(OSError, UnicodeEncodeError):
                        if done.old_text is None:
                            done.path.unlink(missing_ok=True)
                        else:
                            await asyncio.to_thread(self._write, done.path, done.old_text)
                why = f"could not write {change.path}: {detail}"
                return [
                    EditOutcome(applied=False, reason=why if c is change else f"not applied: {why}")
                    for c in changes
                ]
            written.append(change)
        outcomes = []
        for change, before in zip(changes, befores, strict=True):
            diagnostics = None
            if self.verifier.applies_to(change.path) and not change.delete:
                diagnostics = await self.verifier.after(change.path, change.new_text, before)
            outcomes.append(EditOutcome(applied=True, diagnostics=diagnostics))
        return outcomes

    async def delete(self, path: Path) -> EditOutcome:
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
    def _current(cls, path: Path) -> str | None:
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
        tmp = target.parent / f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"
        # 0o666 through the umask: a new file gets the same mode `open()` would give it.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as f:
                if mode is not None:
                    os.fchmod(f.fileno(), mode)
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
