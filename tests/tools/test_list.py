from __future__ import annotations

from pathlib import Path

import pytest

from agentls.tools.base import ToolError
from agentls.tools.list import ListTool
from tests.tools.conftest import RunTool, ToolTestContext

lst = ListTool()


def touch(root: Path, rel: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")


async def test_tree_directories_first(root: Path, run: RunTool, ctx: ToolTestContext) -> None:
    for rel in (
        "README.md",
        "src/pkg/mod.py",
        "src/pkg/__init__.py",
        "src/main.py",
        "tests/test_a.py",
        ".gitignore",
    ):
        touch(root, rel)
    result = await run(lst)
    assert result.output == "\n".join(
        [
            "./",
            "  src/",
            "    pkg/",
            "      __init__.py",
            "      mod.py",
            "    main.py",
            "  tests/",
            "    test_a.py",
            "  .gitignore",
            "  README.md",
        ]
    )
    assert lst.name == "list" and ctx.queries[-1].tool == "list"
    sub = await run(lst, path="src")
    assert sub.output.splitlines()[0] == "src/"
    assert "  pkg/" in sub.output


async def test_ignores(root: Path, run: RunTool) -> None:
    (root / ".gitignore").write_text("*.log\nout/\n")
    for rel in (
        "a.py",
        "x.log",
        "out/o.py",
        ".git/HEAD",
        "node_modules/m/index.js",
        "pkg/__pycache__/a.pyc",
        ".venv/bin/python",
        "pkg/b.py",
    ):
        touch(root, rel)
    result = await run(lst)
    for hidden in ("x.log", "out", ".git/", "node_modules", "__pycache__", ".venv"):
        assert hidden not in result.output
    assert "a.py" in result.output and "pkg/" in result.output and "b.py" in result.output


async def test_capped_with_collapsed_directories(root: Path, run: RunTool) -> None:
    for i in range(150):
        touch(root, f"big/f{i:03}.txt")
    for i in range(80):
        touch(root, f"other/g{i:02}.txt")
    touch(root, "small/one.txt")
    result = await run(lst)
    lines = result.output.splitlines()
    assert "  big/ (150 files)" in lines
    assert "  other/" in lines and "    g00.txt" in lines
    assert "  small/" in lines and "    one.txt" in lines
    assert "not expanded" in result.output
    assert len(lines) < 220


async def test_too_many_top_level_entries(root: Path, run: RunTool) -> None:
    for i in range(260):
        touch(root, f"f{i:03}.txt")
    result = await run(lst)
    assert "first 200 of 260" in result.output
    assert len(result.output.splitlines()) < 210


async def test_depth_limited(root: Path, run: RunTool) -> None:
    touch(root, "a/b/c/d/e/f/deep.txt")
    result = await run(lst)
    assert "deep.txt" not in result.output
    assert "(1 file)" in result.output


async def test_errors(root: Path, run: RunTool) -> None:
    touch(root, "f.txt")
    with pytest.raises(ToolError, match="read"):
        await run(lst, path="f.txt")
    with pytest.raises(ToolError, match="not found"):
        await run(lst, path="nope")
    with pytest.raises(ToolError, match="outside"):
        await run(lst, path="/")


async def test_empty(run: RunTool) -> None:
    result = await run(lst)
    assert "no files" in result.output
