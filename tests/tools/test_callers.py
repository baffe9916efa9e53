"""callers on a real language server (jedi-language-server): from references, imports are
skipped and each calling function is counted once."""

from __future__ import annotations

from agentls.tools.callers import CallersTool
from tests.tools.conftest import RunTool, ToolTestContext


async def test_callers_from_references_skip_imports_and_count_each_function_once(
    lrun: RunTool,
) -> None:
    out = (await lrun(CallersTool(), path="shop/greet.py", symbol="greet")).output
    assert "2 callers in 2 files" in out  # run in app.py, Box.size in shop/greet.py
    assert "from shop.greet import greet" not in out and "def greet" not in out
    assert '[function run] print(greet("world"))' in out
    many = (await lrun(CallersTool(), path="clock.py", symbol="tick", include="user_01.py")).output
    assert "1 caller in 1 file" in many and "import" not in many


async def test_a_multi_line_import_is_no_caller(lrun: RunTool, lctx: ToolTestContext) -> None:
    (lctx.root / "late.py").write_text(
        "from clock import (\n    tick,\n)\n\n\ndef later():\n    return tick(9)\n"
    )
    out = (await lrun(CallersTool(), path="clock.py", symbol="tick", include="late.py")).output
    assert "1 caller in 1 file" in out and "tick," not in out
    assert "7: [function later] return tick(9)" in out
