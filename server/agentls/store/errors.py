"""What goes wrong with the database, said in one line a person can act on.

Every failure of the store's open and write paths (SQLite's errors, and the OS errors of making
its directory) is raised as StoreError, whose message names the path and what to do; the CLI and
the language server show that message (no traceback) and `agentls run` exits 1.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

# SQLite's primary result codes (sqlite3.h), as the extended codes carry them in their low byte.
SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26

# Less free space than this on the database's filesystem, and an I/O error is taken for a full disk
# (SQLite reports ENOSPC on its shared-memory file as SQLITE_IOERR_SHMSIZE, not SQLITE_FULL).
_NEARLY_FULL_BYTES = 64 * 1024

ELSEWHERE = "or set AGENTLS_DATA_DIR to use another directory"

# How long a statement waits for another process's lock before failing with "database is locked"
# (the store's busy_timeout; the message of that failure says it).
BUSY_TIMEOUT_MS = 5000


class StoreError(RuntimeError):
    """The database cannot be used: `message` is one line saying which file and what to do."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def disk_full(path: Path) -> StoreError:
    return StoreError(
        f"the disk is full: the database {path} could not be written. Free some space on it, "
        "or set AGENTLS_DATA_DIR to a directory on another disk.",
        path,
    )


def _nearly_full(directory: Path) -> bool:
    try:
        stats = os.statvfs(directory)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < _NEARLY_FULL_BYTES


def _writable_dir(directory: Path) -> bool:
    return os.access(directory, os.W_OK | os.X_OK)


# The codes of faults of the database or its disk (not of the statement: a constraint violated is
# a bug of the caller, raised as it is).
_FAULTS = frozenset(
    {3, SQLITE_BUSY, SQLITE_LOCKED, 7, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL}
    | {SQLITE_CANTOPEN, 15, 22, 23, SQLITE_NOTADB}
)


def is_fault(exc: sqlite3.Error) -> bool:
    """Whether SQLite's error is a fault of the database or its disk (corrupt, read-only, full,
    locked, ...) rather than of the statement."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in _FAULTS


def from_sqlite(exc: sqlite3.Error, path: Path) -> StoreError:
    """The StoreError for an error SQLite raised on the database at `path`."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    directory = path.parent
    if primary == SQLITE_NOTADB:
        return StoreError(
            f"{path} is not an agentls database (the file holds something else). Move it aside "
            f"to start a new database there, {ELSEWHERE}.",
            path,
        )
    if primary == SQLITE_CORRUPT:
        return StoreError(
            f"the database {path} is damaged ({exc}). Move it aside, with its -wal and -shm "
            f"files, to start a new one (`sqlite3 {path} .recover` may save its sessions), "
            f"{ELSEWHERE}.",
            path,
        )
    if primary == SQLITE_FULL or (primary == SQLITE_IOERR and _nearly_full(directory)):
        return disk_full(path)
    if primary in (SQLITE_BUSY, SQLITE_LOCKED):
        return StoreError(
            f"the database {path} is locked by another process (waited "
            f"{BUSY_TIMEOUT_MS / 1000:g} s for it). Wait for that process to finish or stop it "
            f"(`fuser {path}` names it), {ELSEWHERE}.",
            path,
        )
    if primary in (SQLITE_READONLY, SQLITE_CANTOPEN):
        if path.is_dir():
            return StoreError(
                f"the database {path} is a directory, not a file. Move it aside, {ELSEWHERE}.",
                path,
            )
        if not _writable_dir(directory):
            return StoreError(
                f"the data directory {directory} is not writable, and the database {path} "
                f"needs to write there (its -wal and -shm files). Make it writable "
                f"(chmod u+w {directory}), {ELSEWHERE}.",
                path,
            )
        if path.exists() and not os.access(path, os.W_OK):
            return StoreError(
                f"the database {path} is read-only. Make it writable (chmod u+w {path}), "
                f"{ELSEWHERE}.",
                path,
            )
        for side in (Path(f"{path}-wal"), Path(f"{path}-shm")):
            if side.exists() and not os.access(side, os.W_OK):
                return StoreError(
                    f"the database's {side.name[len(path.name) + 1 :]} file {side} is read-only. "
                    f"Make it writable (chmod u+w {side}), {ELSEWHERE}.",
                    path,
                )
        if primary == SQLITE_READONLY:
            return StoreError(
                f"the database {path} cannot be written ({name}: {exc}). Check that it and its "
                f"directory are writable, {ELSEWHERE}.",
                path,
            )
        return StoreError(f"cannot open the database {path} ({exc}); {ELSEWHERE}.", path)
    if primary == SQLITE_IOERR:
        return StoreError(
            f"the database {path} could not be read or written (disk I/O error, {name}). Check "
            f"the disk it is on, {ELSEWHERE}.",
            path,
        )
    return StoreError(f"the database {path} failed: {exc} ({name}); {ELSEWHERE}.", path)


def from_os(exc: OSError, path: Path) -> StoreError:
    """The StoreError for an OS error while preparing the database at `path` (its directory)."""
    directory = path.parent
    if exc.errno == errno.ENOSPC:
        return disk_full(path)
    if isinstance(exc, NotADirectoryError | FileExistsError):
        blocker = next(
            (p for p in [directory, *directory.parents] if p.exists() and not p.is_dir()),
            directory,
        )
        return StoreError(
            f"cannot create the data directory {directory}: {blocker} is a file, not a "
            f"directory. Move that file aside, {ELSEWHERE}.",
            path,
        )
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        existing = next((p for p in [directory, *directory.parents] if p.exists()), directory)
        why = "is on a read-only filesystem" if exc.errno == errno.EROFS else "is not writable"
        return StoreError(
            f"cannot create the data directory {directory}: {existing} {why}. Create the "
            f"directory yourself or make {existing} writable, {ELSEWHERE}.",
            path,
        )
    return StoreError(
        f"cannot use the data directory {directory}: {exc.strerror or exc}; {ELSEWHERE}.", path
    )
