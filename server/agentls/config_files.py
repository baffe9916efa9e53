"""Reading agentls's JSON config files: a user's or a workspace's, parsed as one object; a
workspace's read once, with limits (it comes from the repository, not the user)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def parse_json_object(path: Path, raw: bytes | str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


# A workspace config larger than this is refused (it comes from the repository, not the user).
MAX_WORKSPACE_CONFIG_BYTES = 1_000_000


def read_workspace_bytes(path: Path) -> bytes | None:
    """The workspace config's bytes, read once (what is hashed for trust is what is parsed); None
    when there is none. A FIFO, a device or a huge file is an error, never a hang."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path}: not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_WORKSPACE_CONFIG_BYTES:
            chunk = os.read(fd, MAX_WORKSPACE_CONFIG_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    finally:
        os.close(fd)
    if len(data) > MAX_WORKSPACE_CONFIG_BYTES:
        raise ValueError(f"{path}: larger than {MAX_WORKSPACE_CONFIG_BYTES:,} bytes")
    return data
