"""code_actions with ruff's real language server (headless): the actions at a line, numbered,
with their kinds and the preferred ones, narrowed by `only`; bad ranges named."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.tools.base import ToolError
from agentls.tools.code_actions import CodeActionsTool
from agentls.verify.workspace import DiskWorkspace
from tests.tools.code_action_support import UNSORTED, ruff_servers
from tests.tools.conftest import RunTool, ToolTestContext


@pytest.fixture
async def rctx(root: Path) -> AsyncIterator[ToolTestContext]:
    (root / "app.py").write_text(UNSORTED)
    settings = Settings.model_validate({"languageServers": ruff_servers()})
    workspace = DiskWorkspace(root, lambda: settings)
    yield ToolTestContext(root, workspace)
    await workspace.languages.aclose()


@pytest.fixture
def rrun(rctx: ToolTestContext) -> RunTool:
    async def _run(tool, **raw):  # type: ignore[no-untyped-def]
        return await tool.run(tool.parse(raw), rctx)

    return _run


async def test_lists_the_quick_fixes_and_source_actions_at_a_line(
    rrun: RunTool, rctx: ToolTestContext
) -> None:
    result = await rrun(CodeActionsTool(), path="app.py", line=1)
    lines = result.output.splitlines()
    assert lines[0].endswith("code actions at app.py:1:")
    # The unused import's fix, for the diagnostic on that line, is preferred and says so.
    fix = next(line for line in lines if "Remove unused import" in line)
    assert fix.startswith("  1. ") and "[quickfix]" in fix and "(preferred)" in fix
    assert "`sys` imported but unused" in fix
    assert any("Organize imports [source.organizeImports" in line for line in lines)
    assert any("[source.fixAll" in line for line in lines)
    # Listing is a read of the file, asked as one; nothing was changed.
    assert [q.tool for q in rctx.queries] == ["code_actions"]
    assert (rctx.root / "app.py").read_text() == UNSORTED


async def test_only_narrows_to_one_kind(rrun: RunTool) -> None:
    result = await rrun(CodeActionsTool(), path="app.py", line=1, only="source.organizeImports")
    assert result.output.splitlines()[:2] == [
        "1 code action of kind source.organizeImports at app.py:1:",
        "  1. Ruff: Organize imports [source.organizeImports.ruff]",
    ]


async def test_a_line_without_actions_says_so(rrun: RunTool) -> None:
    result = await rrun(CodeActionsTool(), path="app.py", line=6, only="quickfix")
    assert result.output == "No code actions of kind quickfix at app.py:6."


async def test_a_range_past_the_end_or_backwards_is_refused(rrun: RunTool) -> None:
    with pytest.raises(ToolError, match="line 40 is past the end of app.py"):
        await rrun(CodeActionsTool(), path="app.py", line=40)
    with pytest.raises(ToolError, match=r"end_line \(1\) is before line \(3\)"):
        await rrun(CodeActionsTool(), path="app.py", line=3, end_line=1)
