from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentls.tools.base import PermissionDenied, ToolError
from agentls.tools.glob import GlobTool
from tests.tools.conftest import RunTool, ToolTestContext

glob = GlobTool()


def touch(root: Path, rel: str, mtime: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def test_newest_first_relative_to_root(
    root: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    touch(root, "old.py", 1_000_000)
    touch(root, "src/mid.py", 2_000_000)
    touch(root, "src/deep/new.py", 3_000_000)
    touch(root, "src/readme.md", 4_000_000)
    result = await run(glob, pattern="**/*.py")
    assert result.output.splitlines() == ["src/deep/new.py", "src/mid.py", "old.py"]
    assert ctx.queries[-1].tool == "glob" and ctx.queries[-1].subject == "."
    sub = await run(glob, pattern="*.py", path="src")
    assert sub.output.splitlines() == ["src/deep/new.py", "src/mid.py"]


async def test_gitignore_respected_without_git_repo(root: Path, run: RunTool) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n")
    touch(root, "keep.py")
    touch(root, "build/gen.py")
    touch(root, "debug.log")
    result = await run(glob, pattern="**/*")
    assert result.output.splitlines() == ["keep.py"]


async def test_hidden_excluded_unless_named(root: Path, run: RunTool) -> None:
    touch(root, ".github/workflows/ci.yml")
    touch(root, ".editorconfig")  # (.envrc would be a secret, left out for that reason)
    touch(root, "conf.yml")
    touch(root, ".git/config")
    plain = await run(glob, pattern="**/*.yml")
    assert plain.output.splitlines() == ["conf.yml"]
    named = await run(glob, pattern=".github/**/*.yml")
    assert named.output.splitlines() == [".github/workflows/ci.yml"]
    env = await run(glob, pattern=".editorconfig")
    assert env.output.splitlines() == [".editorconfig"]
    git = await run(glob, pattern=".*/**")
    assert ".git/config" not in git.output


async def test_capped_at_100(root: Path, run: RunTool) -> None:
    for i in range(130):
        touch(root, f"many/f{i:03}.txt", 1_000_000 + i)
    result = await run(glob, pattern="many/*.txt")
    lines = result.output.splitlines()
    assert lines[0] == "many/f129.txt"
    assert lines[99] == "many/f030.txt"
    assert "100" in result.output and "130 files" in result.output and "30 more" in result.output


async def test_no_match(root: Path, run: RunTool) -> None:
    touch(root, "a.py")
    result = await run(glob, pattern="*.rs")
    assert not result.is_error and result.output.startswith("No files found")
    assert result.output == "No files found matching *.rs in the workspace."


async def test_bad_path(root: Path, run: RunTool) -> None:
    touch(root, "a.py")
    with pytest.raises(ToolError, match="not a directory"):
        await run(glob, pattern="*", path="a.py")
    with pytest.raises(ToolError, match="not found"):
        await run(glob, pattern="*", path="missing")
    with pytest.raises(ToolError, match="outside"):
        await run(glob, pattern="*", path="..")


async def test_denied(root: Path, run: RunTool, ctx: ToolTestContext) -> None:
    ctx.deny_feedback = "no"
    with pytest.raises(PermissionDenied):
        await run(glob, pattern="*")


async def test_glob_syntax(root: Path, run: RunTool) -> None:
    for rel in (
        "a.ts",
        "b.tsx",
        "c.js",
        "src/x/test_one.py",
        "src/test_two.py",
        "lib/test_three.py",
        "f1.txt",
        "f2.txt",
        "fa.txt",
    ):
        touch(root, rel, 1_000_000)
    assert sorted((await run(glob, pattern="*.{ts,tsx}")).output.splitlines()) == ["a.ts", "b.tsx"]
    assert sorted((await run(glob, pattern="src/**/test_*.py")).output.splitlines()) == [
        "src/test_two.py",
        "src/x/test_one.py",
    ]
    assert (await run(glob, pattern="src/*.py")).output.splitlines() == ["src/test_two.py"]
    assert sorted((await run(glob, pattern="f[0-9].txt")).output.splitlines()) == [
        "f1.txt",
        "f2.txt",
    ]
    assert sorted((await run(glob, pattern="./f?.txt")).output.splitlines()) == [
        "f1.txt",
        "f2.txt",
        "fa.txt",
    ]
    assert sorted((await run(glob, pattern="src/")).output.splitlines()) == [
        "src/test_two.py",
        "src/x/test_one.py",
    ]


async def test_absolute_pattern_under_path(root: Path, run: RunTool) -> None:
    touch(root, "src/a.py")
    result = await run(glob, pattern=f"{root}/src/*.py")
    assert result.output.splitlines() == ["src/a.py"]
    with pytest.raises(ToolError, match="relative"):
        await run(glob, pattern="/elsewhere/*.py")


async def test_secrets_are_left_out_of_glob(tmp_path: Path) -> None:
    (tmp_path / "server.key").write_text("X=1\n")
    (tmp_path / "id_ed25519").write_text("key\n")
    (tmp_path / ".env").write_text("X=1\n")
    (tmp_path / "settings.py").write_text("x = 1\n")
    ctx = ToolTestContext(tmp_path)
    result = await GlobTool().run(GlobTool().parse({"pattern": "**/*"}), ctx)
    assert "settings.py" in result.output
    assert (
        ".env.local" not in result.output.splitlines()
        and "id_ed25519" not in result.output.splitlines()
    )
    assert "2 files that may hold secrets" in result.output
