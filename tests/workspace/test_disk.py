from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.verify.workspace import DiskWorkspace


@pytest.fixture
def ws(root: Path) -> DiskWorkspace:
    return DiskWorkspace(root)


async def test_read_text_exact(ws: DiskWorkspace, root: Path) -> None:
    (root / "a.txt").write_bytes("crlf\r\nünïcode\n\ufeffbom".encode())
    assert await ws.read_text(root / "a.txt") == "crlf\r\nünïcode\n\ufeffbom"
    assert ws.root == root


@pytest.mark.parametrize("data", [b"abc\x00def", b"\xff\xfe\xfa not utf-8"], ids=["nul", "latin"])
async def test_read_binary_raises(ws: DiskWorkspace, root: Path, data: bytes) -> None:
    (root / "b.bin").write_bytes(data)
    with pytest.raises(UnicodeDecodeError):
        await ws.read_text(root / "b.bin")


async def test_read_missing_and_directory(ws: DiskWorkspace, root: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await ws.read_text(root / "nope.txt")
    (root / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        await ws.read_text(root / "d")


async def test_write_creates_parents_atomically(ws: DiskWorkspace, root: Path) -> None:
    outcome = await ws.write_text(root / "a/b/c.txt", "x\r\ny\n", None)
    assert outcome.applied and outcome.reason is None
    assert (root / "a/b/c.txt").read_bytes() == b"x\r\ny\n"
    assert os.listdir(root / "a/b") == ["c.txt"]  # no temp files left


async def test_new_file_mode_follows_umask(ws: DiskWorkspace, root: Path) -> None:
    old = os.umask(0o022)
    try:
        await ws.write_text(root / "n.txt", "x", None)
    finally:
        os.umask(old)
    assert stat.S_IMODE((root / "n.txt").stat().st_mode) == 0o644


async def test_overwrite_preserves_mode(ws: DiskWorkspace, root: Path) -> None:
    script = root / "run.sh"
    script.write_text("#!/bin/sh\necho a\n")
    script.chmod(0o751)
    inode = script.stat().st_ino
    outcome = await ws.write_text(script, "#!/bin/sh\necho b\n", "#!/bin/sh\necho a\n")
    assert outcome.applied
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert script.read_text() == "#!/bin/sh\necho b\n"
    assert script.stat().st_ino != inode  # replaced by rename, not rewritten in place


async def test_write_through_symlink_keeps_link(ws: DiskWorkspace, root: Path) -> None:
    (root / "real.txt").write_text("old")
    (root / "link.txt").symlink_to("real.txt")
    await ws.write_text(root / "link.txt", "new", "old")
    assert (root / "link.txt").is_symlink()
    assert (root / "real.txt").read_text() == "new"


async def test_write_refuses_when_the_file_changed_since_old_text(
    ws: DiskWorkspace, root: Path
) -> None:
    # The change may have waited for an approval while the user edited the file: never erase that.
    (root / "f.txt").write_text("changed on disk")
    outcome = await ws.write_text(root / "f.txt", "mine", "what the caller saw")
    assert not outcome.applied and "changed while the change waited" in (outcome.reason or "")
    assert (root / "f.txt").read_text() == "changed on disk"
    outcome = await ws.write_text(root / "new.txt", "mine", None)
    assert outcome.applied
    outcome = await ws.write_text(root / "new.txt", "again", None)
    assert not outcome.applied and "was created" in (outcome.reason or "")
    (root / "new.txt").unlink()
    outcome = await ws.write_text(root / "new.txt", "again", "mine")
    assert not outcome.applied and "was deleted" in (outcome.reason or "")


async def test_write_failure_is_an_outcome(ws: DiskWorkspace, root: Path) -> None:
    (root / "file").write_text("x")
    outcome = await ws.write_text(root / "file" / "child.txt", "y", None)
    assert not outcome.applied and outcome.reason
    (root / "dir").mkdir()
    outcome = await ws.write_text(root / "dir", "y", None)
    assert not outcome.applied and "directory" in (outcome.reason or "")


async def test_fifo_is_not_text(ws: DiskWorkspace, root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(UnicodeDecodeError):
        await ws.read_text(root / "pipe")


async def test_delete(ws: DiskWorkspace, root: Path) -> None:
    (root / "made.txt").write_text("x")
    assert (await ws.delete(root / "made.txt")).applied
    assert not (root / "made.txt").exists()
    assert (await ws.delete(root / "made.txt")).applied  # already gone: nothing to do
    (root / "d").mkdir()
    outcome = await ws.delete(root / "d")
    assert not outcome.applied and "directory" in (outcome.reason or "")
    assert (root / "d").is_dir()


async def test_a_write_that_breaks_python_reports_it(ws: DiskWorkspace, root: Path) -> None:
    (root / "pkg").mkdir()
    path = root / "pkg" / "m.py"
    path.write_text("def f():\n    return 1\n")
    outcome = await ws.write_text(path, "def f(:\n    return 1\n", "def f():\n    return 1\n")
    assert outcome.applied and outcome.diagnostics is not None
    assert outcome.diagnostics.startswith(
        "Diagnostics (agentls syntax check only: not names, types or tests): 1 new problem(s) in pkg/m.py after this edit:\n"
        "  line 1: error [agentls] SyntaxError:"
    )
    fixed = await ws.write_text(path, "def f():\n    return 2\n", "def f(:\n    return 1\n")
    assert fixed.diagnostics == (
        "Diagnostics (agentls syntax check only: not names, types or tests): no syntax errors in pkg/m.py. "
        "It fixed 1 problem(s) the file had before."
    )


async def test_a_new_json_file_is_checked(ws: DiskWorkspace, root: Path) -> None:
    outcome = await ws.write_text(root / "c.json", '{"a": }', None)
    assert outcome.diagnostics is not None and "1 new problem(s) in c.json" in outcome.diagnostics


async def test_files_nothing_checks_get_no_summary(ws: DiskWorkspace, root: Path) -> None:
    outcome = await ws.write_text(root / "notes.txt", "def f(:\n", None)
    assert outcome.applied and outcome.diagnostics is None


async def test_a_refused_write_is_not_verified(root: Path) -> None:
    ran = root / "RAN"
    ws = DiskWorkspace(root, lambda: Settings(verify_commands={"*.py": f"touch {ran}"}))
    (root / "a.py").write_text("x = 1\n")
    outcome = await ws.write_text(root / "a.py", "x = (\n", "x = 0\n")
    assert not outcome.applied and outcome.diagnostics is None
    assert not ran.exists()


async def test_verify_commands_of_the_settings_run_after_a_write(root: Path) -> None:
    settings = Settings(verify_commands={"*.txt": "grep -c TODO {path}"})
    ws = DiskWorkspace(root, lambda: settings)
    outcome = await ws.write_text(root / "notes.txt", "TODO one\nTODO two\n", None)
    assert outcome.diagnostics == (
        "Diagnostics (agentls syntax check only: not names, types or tests): no syntax errors in notes.txt.\n"
        f"Check `grep -c TODO {root / 'notes.txt'}` passed:\n2"
    )
