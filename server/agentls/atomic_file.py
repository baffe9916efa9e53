"""A file replaced whole or not at all: the new bytes written to a temporary file beside it,
flushed to disk, then renamed over it, so a reader (or a crash) never sees half of it."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path


def replace_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write data as path, atomically. `mode`: the file's permission bits; None gives a new file
    the mode `open()` would (0o666 through the umask). The temporary file is removed on failure."""
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
