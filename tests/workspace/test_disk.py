"""DiskFiles: the raw access to the plain filesystem (reads of text only, atomic writes)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentls.workspace.disk import DiskFiles


@pytest.fixture
def ws(root: Path) -> DiskFiles:
    return DiskFiles(root)


async def test_read_text_exact(ws: DiskFiles, root: Path) -> None:
    (root / "a.txt").write_bytes("crlf\r\nünïcode\n\ufeffbom".encode())
    assert await ws.read_text(root / "a.txt") == "crlf\r\nünïcode\n\ufeffbom"
    assert ws.root == root


@pytest.mark.parametrize("data", [b"abc\x00def", b"\xff\xfe\xfa not utf-8"], ids=["nul", "latin"])
async def test_read_binary_raises(ws: DiskFiles, root: Path, data: bytes) -> None:
    (root / "b.bin").write_bytes(data)
    with pytest.raises(UnicodeDecodeError):
        await ws.read_text(root / "b.bin")


async def test_read_missing_and_directory(ws: DiskFiles, root: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await ws.read_text(root / "nope.txt")
    (root / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        await ws.read_text(root / "d")


async def test_write_creates_parents_atomically(ws: DiskFiles, root: Path) -> None:
    outcome = await ws.write_text(root / "a/b/c.txt", "x\r\ny\n", None)
    assert outcome.applied and outcome.reason is None
    assert (root / "a/b/c.txt").read_bytes() == b"x\r\ny\n"
    assert os.listdir(root / "a/b") == ["c.txt"]  # no temp files left


async def test_new_file_mode_follows_umask(ws: DiskFiles, root: Path) -> None:
    old = os.umask(0o022)
    try:
        await ws.write_text(root / "n.txt", "x", None)
    finally:
        os.umask(old)
    assert stat.S_IMODE((root / "n.txt").stat().st_mode) == 0o644


async def test_overwrite_preserves_mode(ws: DiskFiles, root: Path) -> None:
    script = root / "run.sh"
    script.write_text("#!/bin/sh\necho a\n")
    script.chmod(0o751)
    inode = script.stat().st_ino
    outcome = await ws.write_text(script, "#!/bin/sh\necho b\n", "#!/bin/sh\necho a\n")
    assert outcome.applied
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.read_text() == "#!/bin/sh\necho b\n"
    assert script.stat().st_ino != inode  # replaced by rename, not rewritten in place


async def test_write_through_symlink_keeps_link(ws: DiskFiles, root: Path) -> None:
    (root / "real.txt").write_text("old")
    (root / "link.txt").symlink_to("real.txt")
    await ws.write_text(root / "link.txt", "new", "old")
    assert (root / "link.txt").is_symlink()
    assert (root / "real.txt").read_text() == "new"


async def test_write_failure_is_an_outcome(ws: DiskFiles, root: Path) -> None:
    (root / "file").write_text("x")
    outcome = await ws.write_text(root / "file" / "child.txt", "y", None)
    assert not outcome.applied and outcome.reason
    (root / "dir").mkdir()
    outcome = await ws.write_text(root / "dir", "y", None)
    assert not outcome.applied and "directory" in (outcome.reason or "")


async def test_fifo_is_not_text(ws: DiskFiles, root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(UnicodeDecodeError):
        await ws.read_text(root / "pipe")


async def test_delete(ws: DiskFiles, root: Path) -> None:
    (root / "made.txt").write_text("x")
    assert (await ws.delete(root / "made.txt")).applied
    assert not (root / "made.txt").exists()
    assert (await ws.delete(root / "made.txt")).applied  # already gone: nothing to do
    (root / "d").mkdir()
    outcome = await ws.delete(root / "d")
    assert not outcome.applied and "directory" in (outcome.reason or "")
    assert (root / "d").is_dir()
