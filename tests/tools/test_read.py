# ruff: noqa: ASYNC230, ASYNC240  (blocking file I/O is fine in these tests)
from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from agentls.tools.base import PermissionDenied, ToolError
from agentls.tools.read import ReadTool
from agentls.tools.support.file_writes import LARGE_FILE_BYTES
from agentls.verify.workspace import DiskWorkspace
from tests.tools.conftest import RunTool, ToolTestContext

read = ReadTool()


def write_lines(path: Path, n: int, fmt: str = "line {}") -> None:
    path.write_text("".join(fmt.format(i) + "\n" for i in range(1, n + 1)))


async def test_numbered_like_cat_n(root: Path, run: RunTool, ctx: ToolTestContext) -> None:
    (root / "a.txt").write_text("alpha\n\tbeta\ngamma")
    result = await run(read, path="a.txt")
    assert not result.is_error
    assert result.output == "     1\talpha\n     2\t\tbeta\n     3\tgamma"
    assert ctx.ledger.has_read(root / "a.txt")
    assert not ctx.ledger.changed_since_read(root / "a.txt", "alpha\n\tbeta\ngamma")
    q = ctx.queries[0]
    assert (q.tool, q.subject, q.path, q.outside_workspace) == (
        "read",
        "a.txt",
        root / "a.txt",
        False,
    )


async def test_offset_and_limit_page(root: Path, run: RunTool) -> None:
    write_lines(root / "f.txt", 50)
    result = await run(read, path="f.txt", offset=10, limit=5)
    lines = result.output.splitlines()
    assert lines[0] == "    10\tline 10"
    assert lines[4] == "    14\tline 14"
    assert "offset=15" in result.output and "of 50" in result.output
    last = await run(read, path="f.txt", offset=48)
    assert "    50\tline 50" in last.output
    assert "offset=" not in last.output


async def test_default_limit_2000_with_continuation(root: Path, run: RunTool) -> None:
    write_lines(root / "big.txt", 2500)
    result = await run(read, path="big.txt")
    assert "  2000\tline 2000" in result.output
    assert "line 2001" not in result.output
    assert "offset=2001" in result.output
    assert "500 more lines" in result.output


async def test_offset_past_end(root: Path, run: RunTool) -> None:
    write_lines(root / "f.txt", 3)
    with pytest.raises(ToolError, match="past the end.*3 lines"):
        await run(read, path="f.txt", offset=10)


async def test_invalid_offset_rejected_by_schema(run: RunTool) -> None:
    with pytest.raises(ToolError, match="offset"):
        await run(read, path="x", offset=0)


async def test_long_lines_are_cut(root: Path, run: RunTool) -> None:
    (root / "long.txt").write_text("short\n" + "x" * 5000 + "\n")
    result = await run(read, path="long.txt")
    line2 = result.output.splitlines()[1]
    assert line2.startswith("     2\t" + "x" * 2000)
    assert "x" * 2001 not in line2
    assert "truncated" in line2 and "5000" in line2
    assert "longer than 2000" in result.output


async def test_crlf_and_unicode(root: Path, run: RunTool) -> None:
    (root / "w.txt").write_bytes("héllo wörld ✓\r\nzweite Zeile\r\n".encode())
    result = await run(read, path="w.txt")
    assert result.output == "     1\théllo wörld ✓\n     2\tzweite Zeile"


async def test_empty_file(root: Path, run: RunTool) -> None:
    (root / "empty.txt").write_text("")
    result = await run(read, path="empty.txt")
    assert not result.is_error and "empty" in result.output


@pytest.mark.parametrize(
    "data",
    [b"PNG\x00\x01\x02binary", b"caf\xe9 latin-1 text\n"],
    ids=["nul", "not-utf8"],
)
async def test_binary_refused(root: Path, run: RunTool, ctx: ToolTestContext, data: bytes) -> None:
    (root / "b.bin").write_bytes(data)
    with pytest.raises(ToolError, match="binary"):
        await run(read, path="b.bin")
    assert not ctx.ledger.has_read(root / "b.bin")


async def test_directory_suggests_list(root: Path, run: RunTool) -> None:
    (root / "pkg").mkdir()
    with pytest.raises(ToolError, match="directory.*list"):
        await run(read, path="pkg")


async def test_missing_file_suggests_similar(root: Path, run: RunTool) -> None:
    (root / "src").mkdir()
    (root / "src" / "config.py").write_text("x\n")
    with pytest.raises(ToolError) as info:
        await run(read, path="src/confg.py")
    assert "not found" in str(info.value)
    assert "src/config.py" in str(info.value)


async def test_missing_directory(root: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        await run(read, path="nope/deeper/x.py")


async def test_outside_paths_refused(root: Path, tmp_path: Path, run: RunTool) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret\n")
    (root / "link.txt").symlink_to(secret)
    for raw in ("../secret.txt", str(secret), "link.txt"):
        with pytest.raises(ToolError, match="outside"):
            await run(read, path=raw)


async def test_outside_path_opened_by_rule_is_flagged(
    tmp_path: Path, ctx: ToolTestContext, run: RunTool
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text("hi\n")
    ctx.open_outside.append(other.resolve())
    result = await run(read, path=str(other / "notes.md"))
    assert "hi" in result.output
    q = ctx.queries[0]
    assert q.outside_workspace and q.subject == str((other / "notes.md").resolve())


async def test_permission_denied_propagates(root: Path, ctx: ToolTestContext, run: RunTool) -> None:
    (root / "a.txt").write_text("a\n")
    ctx.deny_feedback = "not that one"
    with pytest.raises(PermissionDenied, match="not that one"):
        await run(read, path="a.txt")
    assert not ctx.ledger.has_read(root / "a.txt")


class BufferWorkspace(DiskWorkspace):
    """An editor-like workspace: open buffers' unsaved text wins over the disk."""

    def __init__(self, root: Path, buffers: dict[Path, str]) -> None:
        super().__init__(root)
        self.buffers = buffers

    async def read_text(self, path: Path) -> str:
        if path in self.buffers:
            return self.buffers[path]
        return await super().read_text(path)


async def test_workspace_buffer_is_source_of_truth(root: Path) -> None:
    (root / "m.py").write_text("on disk\n")
    ctx = ToolTestContext(root, BufferWorkspace(root, {root / "m.py": "unsaved buffer\n"}))
    result = await read.run(read.parse({"path": "m.py"}), ctx)
    assert "unsaved buffer" in result.output
    assert not ctx.ledger.changed_since_read(root / "m.py", "unsaved buffer\n")


def make_huge(path: Path, size: int) -> int:
    """Numbered lines for the first 1000, then ~100-byte filler lines; returns the line count."""
    head = "".join(f"line {i}\n" for i in range(1, 1001)).encode()
    filler = (b"f" * 99 + b"\n") * 10_000  # ~1 MB
    lines = 1000
    with open(path, "wb") as f:
        f.write(head)
        written = len(head)
        while written < size:
            f.write(filler)
            written += len(filler)
            lines += 10_000
        f.write(b"the very end")
    return lines + 1


async def test_huge_file_is_paged_without_loading_it(
    root: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    total = make_huge(root / "huge.log", 50 * 1024 * 1024)
    assert (root / "huge.log").stat().st_size > LARGE_FILE_BYTES
    tracemalloc.start()
    try:
        first = await run(read, path="huge.log", limit=20)
        deep = await run(read, path="huge.log", offset=total - 2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, peak
    assert first.output.startswith("     1\tline 1\n")
    assert "    20\tline 20" in first.output
    assert f"of {total}" in first.output and "offset=21" in first.output
    assert "large" in first.output
    assert deep.output.splitlines()[-1].endswith("\tthe very end") or "the very end" in deep.output
    assert f"{total}\tthe very end" in deep.output
    assert ctx.ledger.has_read(root / "huge.log")


async def test_huge_single_line_is_memory_safe(root: Path, run: RunTool) -> None:
    with open(root / "one.min.js", "wb") as f:
        block = b"var a=1;" * 131072  # 1 MiB
        for _ in range(12):
            f.write(block)
        f.write(b"\nsecond line\n")
    tracemalloc.start()
    try:
        result = await run(read, path="one.min.js")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, peak
    first, second = result.output.splitlines()[:2]
    assert first.startswith("     1\tvar a=1;") and "truncated" in first
    assert len(first) < 2200
    assert second == "     2\tsecond line"


async def test_huge_binary_refused(root: Path, run: RunTool) -> None:
    path = root / "disk.img"
    with open(path, "wb") as f:
        f.truncate(LARGE_FILE_BYTES + 10)
    with pytest.raises(ToolError, match="binary"):
        await run(read, path="disk.img")
    os.unlink(path)


async def test_fifo_refused(root: Path, run: RunTool) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(ToolError, match="regular file"):
        await run(read, path="pipe")
