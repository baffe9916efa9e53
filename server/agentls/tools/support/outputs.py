"""Output too long to show inline, kept whole: a file of the session's own under the system's
temp folder (`agentls-<uid>/<session>/`, private to this user), which the read tool reads without
a question (tools/read.py through CallContext). Only the files written here count as the
session's: a path is one of them when it resolves to exactly that file, still the same inode,
with one link, so neither a `..`, a symlink nor a hard link put in its place reaches another.
They are kept while this process runs (the last MAX_KEPT of a session), and removed when it
exits: after a restart the session would have to ask to read them anyway."""

from __future__ import annotations

import atexit
import os
import re
import secrets
import stat
import tempfile
from pathlib import Path

# A command's output is kept up to this size; past it the file says where it was cut.
MAX_SAVED_BYTES = 100 * 1024 * 1024
# A session's saved outputs kept at once; the oldest goes when another is saved.
MAX_KEPT = 50

# session id -> the real path of each of its saved files -> (st_dev, st_ino) at creation
_saved: dict[str, dict[str, tuple[int, int]]] = {}


def _private_dir(path: Path) -> bool:
    """Make `path` a directory only this user may enter (or find it so); False when it is
    anything else (a link, another user's, open to others)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


def session_folder(session_id: str) -> Path | None:
    """The session's folder for saved outputs (made when missing); None when no private one
    can be had."""
    base = Path(tempfile.gettempdir()) / f"agentls-{os.getuid()}"
    folder = base / re.sub(r"[^A-Za-z0-9_.-]", "_", session_id).lstrip(".")
    if not _private_dir(base) or not _private_dir(folder):
        return None
    return folder


class SavedOutput:
    """The whole output of one call, written to a new file once it passes `inline` bytes (below
    that, nothing is written). `path` is set once written; `cut` when it passed MAX_SAVED_BYTES."""

    def __init__(self, session_id: str, name: str, inline: int) -> None:
        self.session_id = session_id
        self.name = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "output"
        self.inline = inline
        self.path: Path | None = None
        self.cut = False
        self.failed = False
        self.written = 0
        self._pending = bytearray()
        self._fd: int | None = None

    def feed(self, data: bytes) -> None:
        if self.failed or self.cut:
            return
        if self._fd is None:
            self._pending += data
            if len(self._pending) > self.inline:
                self._open()
                pending, self._pending = bytes(self._pending), bytearray()
                self._write(pending)
            return
        self._write(data)

    def _open(self) -> None:
        folder = session_folder(self.session_id)
        if folder is None:
            self.failed = True
            return
        path = folder / f"{self.name}-{secrets.token_hex(4)}.txt"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            self._fd = os.open(path, flags, 0o600)
        except OSError:
            self.failed = True
            return
        self.path = path

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            return
        room = MAX_SAVED_BYTES - self.written
        if len(data) > room:
            data, self.cut = data[:room], True
        try:
            os.write(self._fd, data)  # a regular file takes it all
        except OSError:
            self.failed = True
            self.close()
            return
        self.written += len(data)

    def close(self) -> Path | None:
        """Close the file and make it the session's; its path (None: nothing was saved)."""
        if self._fd is None:
            return None
        fd, self._fd = self._fd, None
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        if self.failed or self.path is None:
            if self.path is not None:
                self.path.unlink(missing_ok=True)
            self.path = None
            return None
        real = os.path.realpath(self.path)
        kept = _saved.setdefault(self.session_id, {})
        kept[real] = (info.st_dev, info.st_ino)
        while len(kept) > MAX_KEPT:
            _remove(self.session_id, next(iter(kept)))
        return self.path


def _remove(session_id: str, real: str) -> None:
    """Forget a saved output and delete it when it is still the file written (a link put in its
    place is deleted, never what it points to)."""
    if is_saved_output(session_id, real) or os.path.islink(real):
        try:
            os.unlink(real)
        except OSError:
            pass
    _saved.get(session_id, {}).pop(real, None)


@atexit.register
def _remove_all() -> None:
    """This process's saved outputs go with it, and their session folders when left empty."""
    for session_id, kept in list(_saved.items()):
        folders = {os.path.dirname(real) for real in kept}
        for real in list(kept):
            _remove(session_id, real)
        for folder in folders:
            try:
                os.rmdir(folder)
            except OSError:
                pass  # not empty (another process's files) or gone


def is_saved_output(session_id: str, path: Path | str) -> bool:
    """Whether `path` is one of the session's saved outputs, as written (see the module)."""
    known = _saved.get(session_id)
    if not known:
        return False
    real = os.path.realpath(path)
    made = known.get(real)
    if made is None:
        return False
    try:
        info = os.lstat(real)
    except OSError:
        return False
    return (
        stat.S_ISREG(info.st_mode)
        and (info.st_dev, info.st_ino) == made
        and info.st_nlink == 1
        and info.st_uid == os.getuid()
    )
