from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentls.tools.base import ToolError
from agentls.tools.grep import GrepTool
from tests.tools.conftest import RunTool, ToolTestContext

grep = GrepTool()


def put(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def test_grouped_by_file_with_line_numbers(
    root: Path, run: RunTool, ctx: ToolTestContext
) -> None:
    put(root, "src/a.py", "import os\ndef foo():\n    return foo_bar()\n")
    put(root, "src/b.py", "x = 1\n# calls foo\n")
    put(root, "notes.txt", "nothing here\n")
    result = await run(grep, pattern=r"foo\w*\(")
    assert result.output == (
        "2 matching lines in 1 file:\n\nsrc/a.py:\n  2: def foo():\n  3:     return foo_bar()"
    )
    both = await run(grep, pattern="foo")
    assert (
        "src/a.py:\n  2: def foo():" in both.output and "src/b.py:\n  2: # calls foo" in both.output
    )
    assert ctx.queries[-1].tool == "grep" and ctx.queries[-1].subject == "."


async def test_include_and_path(root: Path, run: RunTool) -> None:
    put(root, "src/a.py", "needle\n")
    put(root, "src/a.ts", "needle\n")
    put(root, "docs/n.md", "needle\n")
    only_py = await run(grep, pattern="needle", include="*.py")
    assert (
        "src/a.py" in only_py.output
        and "a.ts" not in only_py.output
        and "n.md" not in only_py.output
    )
    in_docs = await run(grep, pattern="needle", path="docs")
    assert "docs/n.md:\n  1: needle" in in_docs.output and "src" not in in_docs.output
    one_file = await run(grep, pattern="needle", path="src/a.ts")
    assert "src/a.ts:\n  1: needle" in one_file.output


async def test_gitignore_and_hidden_respected(root: Path, run: RunTool) -> None:
    put(root, ".gitignore", "dist/\n")
    put(root, "dist/bundle.js", "secret_token\n")
    put(root, ".hidden/conf", "secret_token\n")
    put(root, "app.js", "secret_token\n")
    result = await run(grep, pattern="secret_token")
    assert "app.js" in result.output
    assert "dist" not in result.output and ".hidden" not in result.output


async def test_include_skips_hidden_files_as_a_search_without_it_does(
    root: Path, run: RunTool
) -> None:
    # rg's type filter (what include becomes) would let a dotfile whose name matches through.
    put(root, "src/a.py", "needle\n")
    put(root, ".hidden.py", "needle\n")
    put(root, "src/.generated_helper.py", "needle\n")
    put(root, "pkg/sub/.cache.py", "needle\n")
    plain = await run(grep, pattern="needle")
    only_py = await run(grep, pattern="needle", include="*.py")
    for result in (plain, only_py):
        assert result.output.startswith("1 matching line in 1 file"), result.output
        assert "src/a.py" in result.output and "/." not in result.output
        assert ".hidden.py" not in result.output
    # An include that names dotfiles searches them; so does a search of that one file.
    dotted = await run(grep, pattern="needle", include=".*.py")
    assert ".hidden.py" in dotted.output and "src/.generated_helper.py" in dotted.output
    assert "src/a.py" not in dotted.output
    one = await run(grep, pattern="needle", path=".hidden.py", include="*.py")
    assert ".hidden.py:\n  1: needle" in one.output


async def test_no_matches(root: Path, run: RunTool) -> None:
    put(root, "a.txt", "abc\n")
    result = await run(grep, pattern="xyz")
    assert not result.is_error and result.output.startswith("No matches found")
    # The workspace's root is named as such: "in .." would end the sentence twice.
    assert result.output == "No matches found for xyz in the workspace."


async def test_bad_regex_reports_rg_error(root: Path, run: RunTool) -> None:
    put(root, "a.txt", "abc\n")
    with pytest.raises(ToolError) as info:
        await run(grep, pattern="foo(")
    assert "regex parse error" in str(info.value)


async def test_pattern_starting_with_dash(root: Path, run: RunTool) -> None:
    put(root, "a.txt", "x --verbose y\n")
    result = await run(grep, pattern="--verbose")
    assert "1: x --verbose y" in result.output


async def test_matches_capped(root: Path, run: RunTool) -> None:
    put(root, "many.txt", "".join(f"hit {i}\n" for i in range(250)))
    result = await run(grep, pattern="hit")
    assert "  100: hit 99" in result.output and "hit 100\n" not in result.output
    assert "250 matching lines" in result.output and "150 not shown" in result.output


async def test_long_lines_cut(root: Path, run: RunTool) -> None:
    put(root, "min.js", "var needle=1;" + "x" * 10_000 + "\n")
    result = await run(grep, pattern="needle")
    assert "var needle=1;" in result.output
    assert len(result.output) < 1000
    assert "cut" in result.output


async def test_missing_path(root: Path, run: RunTool) -> None:
    with pytest.raises(ToolError, match="not found"):
        await run(grep, pattern="x", path="nope")


async def test_cancel_kills_rg(root: Path, ctx: ToolTestContext) -> None:
    put(root, "a.txt", "a\n")
    task = asyncio.ensure_future(grep.run(grep.parse({"pattern": "a"}), ctx))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_include_does_not_override_gitignore(root: Path, run: RunTool) -> None:
    put(root, ".gitignore", "*.log\nvendor/\n")
    put(root, "debug.log", "needle\n")
    put(root, "vendor/lib/x.py", "needle\n")
    put(root, "src/deep/y.py", "needle\n")
    put(root, "src/z.py", "needle\n")
    logs = await run(grep, pattern="needle", include="*.log")
    assert logs.output.startswith("No matches found")
    deep = await run(grep, pattern="needle", include="src/**/*.py")
    assert (
        "src/deep/y.py" in deep.output and "src/z.py" in deep.output and "vendor" not in deep.output
    )
    anchored = await run(grep, pattern="needle", include="src/*.py")
    assert "src/z.py" in anchored.output and "deep" not in anchored.output
    assert anchored.output.startswith("1 matching line in 1 file")


async def test_secrets_are_left_out_of_grep_unless_allowed(tmp_path: Path) -> None:
    from agentls.permission.rules import PermissionRules

    (tmp_path / "deploy.key").write_text("TOKEN=hunter2\n")
    (tmp_path / "server.pem").write_text("TOKEN=key material\n")
    (tmp_path / "app.py").write_text("TOKEN = 'placeholder'\n")
    ctx = ToolTestContext(tmp_path)
    result = await GrepTool().run(GrepTool().parse({"pattern": "TOKEN"}), ctx)
    assert "app.py" in result.output
    assert "hunter2" not in result.output and "key material" not in result.output
    assert "2 files that may hold secrets" in result.output
    ctx.rules = PermissionRules.from_config(
        [{"tool": "read", "pattern": "**/*.key", "action": "allow"}]
    )
    result = await GrepTool().run(GrepTool().parse({"pattern": "TOKEN"}), ctx)
    assert "hunter2" in result.output and "key material" not in result.output
