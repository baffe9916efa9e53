from __future__ import annotations

from pathlib import Path

import pytest

from agentls.tools.base import PermissionDenied, ToolError
from agentls.tools.read import ReadTool
from agentls.tools.write import WriteTool
from agentls.verify.workspace import DiskWorkspace
from agentls.workspace.protocol import EditOutcome
from tests.tools.conftest import RunTool, ToolTestContext

write = WriteTool()
read = ReadTool()


async def test_creates_file_and_parents(root: Path, run: RunTool, ctx: ToolTestContext) -> None:
    result = await run(write, path="src/pkg/new.py", content="a = 1\nb = 2\n")
    assert not result.is_error
    assert result.output.startswith("Created src/pkg/new.py (2 lines)")
    assert (root / "src/pkg/new.py").read_text() == "a = 1\nb = 2\n"
    q = ctx.queries[-1]
    assert q.tool == "write" and q.subject == "src/pkg/new.py" and q.path == root / "src/pkg/new.py"
    assert q.diff is not None
    assert q.diff.startswith("--- a/src/pkg/new.py\n+++ b/src/pkg/new.py\n")
    assert "+a = 1\n" in q.diff
    # The ledger knows what was written: a follow-up overwrite needs no read.
    assert ctx.ledger.has_read(root / "src/pkg/new.py")
    again = await run(write, path="src/pkg/new.py", content="a = 3\n")
    assert again.output.startswith("Overwrote src/pkg/new.py (1 line)")


async def test_overwrite_without_read_refused_before_asking(
    root: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    (root / "a.txt").write_text("original\n")
    with pytest.raises(ToolError, match="Read it first"):
        await run(write, path="a.txt", content="new\n")
    assert ctx.queries == []
    assert (root / "a.txt").read_text() == "original\n"


async def test_overwrite_after_read(root: Path, run: RunTool, ctx: ToolTestContext) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    await run(read, path="a.txt")
    result = await run(write, path="a.txt", content="one\nTWO\nthree\n")
    assert result.output.startswith("Overwrote a.txt (3 lines)")
    assert (root / "a.txt").read_text() == "one\nTWO\nthree\n"
    diff = ctx.queries[-1].diff
    assert diff is not None and "-two\n" in diff and "+TWO\n" in diff and "@@ -1,2 +1,3 @@" in diff


async def test_changed_since_read_refused(root: Path, run: RunTool, ctx: ToolTestContext) -> None:
    (root / "a.txt").write_text("v1\n")
    await run(read, path="a.txt")
    (root / "a.txt").write_text("v2 by the user\n")
    asked = len(ctx.queries)
    with pytest.raises(ToolError, match="changed since you last read"):
        await run(write, path="a.txt", content="mine\n")
    assert len(ctx.queries) == asked
    assert (root / "a.txt").read_text() == "v2 by the user\n"


async def test_changed_since_read_on_other_lines_is_merged(
    root: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    (root / "m.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    await run(read, path="m.txt")
    (root / "m.txt").write_text("one\ntwo\nthree\nfour\nfive, by the user\n")
    result = await run(write, path="m.txt", content="ONE\ntwo\nthree\nfour\nfive\n")
    assert (root / "m.txt").read_text() == "ONE\ntwo\nthree\nfour\nfive, by the user\n"
    assert "your content was merged into it, their lines kept" in result.output
    # The user is asked about the agent's own change only, on their text.
    diff = ctx.queries[-1].diff
    assert diff is not None and "+ONE\n" in diff and "five" not in diff


async def test_changed_since_read_on_the_same_lines_names_them(root: Path, run: RunTool) -> None:
    (root / "s.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    await run(read, path="s.txt")
    (root / "s.txt").write_text("one\ntwo\nthree\nfour\nfive, by the user\n")
    with pytest.raises(ToolError, match="changed since you last read it .* on line 5"):
        await run(write, path="s.txt", content="one\ntwo\nthree\nfour\nFIVE\n")
    assert (root / "s.txt").read_text() == "one\ntwo\nthree\nfour\nfive, by the user\n"


async def test_crlf_file_keeps_crlf(root: Path, run: RunTool) -> None:
    (root / "w.bat").write_bytes(b"echo one\r\necho two\r\n")
    await run(read, path="w.bat")
    result = await run(write, path="w.bat", content="echo uno\necho dos\n")
    assert (root / "w.bat").read_bytes() == b"echo uno\r\necho dos\r\n"
    assert "CRLF" in result.output


async def test_unicode_content(root: Path, run: RunTool) -> None:
    await run(write, path="u.md", content="naïve ☃ 日本語\n")
    assert (root / "u.md").read_text(encoding="utf-8") == "naïve ☃ 日本語\n"


async def test_identical_content_is_a_no_op(root: Path, run: RunTool, ctx: ToolTestContext) -> None:
    (root / "a.txt").write_text("same\n")
    await run(read, path="a.txt")
    result = await run(write, path="a.txt", content="same\n")
    assert "nothing was written" in result.output and not result.is_error


async def test_directory_refused(root: Path, run: RunTool) -> None:
    (root / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        await run(write, path="d", content="x")


async def test_binary_file_not_overwritten(root: Path, run: RunTool) -> None:
    (root / "img.png").write_bytes(b"\x89PNG\x00\x00")
    with pytest.raises(ToolError, match="binary"):
        await run(write, path="img.png", content="text")


async def test_outside_refused(run: RunTool) -> None:
    with pytest.raises(ToolError, match="outside"):
        await run(write, path="../escape.txt", content="x")


async def test_permission_denied_leaves_file(
    root: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    (root / "a.txt").write_text("keep\n")
    await run(read, path="a.txt")
    ctx.deny_feedback = "don't touch it"
    with pytest.raises(PermissionDenied, match="don't touch it"):
        await run(write, path="a.txt", content="gone\n")
    assert (root / "a.txt").read_text() == "keep\n"
    assert ctx.queries[-1].diff is not None


class ScriptedWorkspace(DiskWorkspace):
    def __init__(self, root: Path, outcome: EditOutcome) -> None:
        super().__init__(root)
        self.outcome = outcome
        self.calls: list[tuple[Path, str, str | None]] = []

    async def write_text(self, path: Path, new_text: str, old_text: str | None) -> EditOutcome:
        self.calls.append((path, new_text, old_text))
        if self.outcome.applied:
            await super().write_text(path, new_text, old_text)
        return self.outcome


async def test_not_applied_is_an_error(root: Path) -> None:
    ws = ScriptedWorkspace(root, EditOutcome(applied=False, reason="the buffer is read-only"))
    ctx = ToolTestContext(root, ws)
    with pytest.raises(ToolError, match="buffer is read-only"):
        await write.run(write.parse({"path": "n.txt", "content": "x\n"}), ctx)
    assert not ctx.ledger.has_read(root / "n.txt")
    assert ws.calls == [(root / "n.txt", "x\n", None)]


async def test_notes_and_diagnostics_reported(root: Path) -> None:
    outcome = EditOutcome(
        applied=True, notes=["the buffer has unsaved changes"], diagnostics="1 error: E1 bad"
    )
    (root / "n.txt").write_text("old\n")
    ctx = ToolTestContext(root, ScriptedWorkspace(root, outcome))
    await ReadTool().run(read.parse({"path": "n.txt"}), ctx)
    result = await write.run(write.parse({"path": "n.txt", "content": "new\n"}), ctx)
    assert "Note: the buffer has unsaved changes" in result.output
    assert "1 error: E1 bad" in result.output


async def test_missing_content_is_invalid(run: RunTool) -> None:
    with pytest.raises(ToolError, match="content"):
        await run(write, path="x.txt")
