"""callees on a real language server with a call hierarchy (pyright): the functions a function
calls, where each is defined and the lines that call it, in the order of the first call."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.tools.base import ToolError
from agentls.tools.callees import CalleesTool
from tests.tools.navigation_support import jedi, pyright, shapes_on


async def test_the_callees_of_a_function_with_their_places(tmp_path: Path) -> None:
    async with shapes_on(tmp_path, pyright) as ctx:
        tool = CalleesTool()
        out = (await tool.run(tool.parse({"path": "report.py", "symbol": "report"}), ctx)).output
    lines = out.splitlines()
    assert (
        lines[0].startswith("Calls made by `report` at report.py:4:5") and "4 callees" in lines[0]
    )
    assert lines[1:5] == [
        "class Square (shapes.py:11)",
        "  5: square = Square(2)",
        "class Circle (shapes.py:19)",
        "  6: shapes = [square, Circle(1)]",
    ]
    assert "function total (shapes.py:27)" in lines
    # len is the standard library's: its stub's full path is said.
    assert any(line.startswith("function len (/") and "builtins.pyi:" in line for line in lines)


async def test_a_server_without_a_call_hierarchy_says_so(tmp_path: Path) -> None:
    async with shapes_on(tmp_path, jedi) as ctx:
        tool = CalleesTool()
        with pytest.raises(ToolError, match="does not offer textDocument/prepareCallHierarchy"):
            await tool.run(tool.parse({"path": "report.py", "symbol": "report"}), ctx)
