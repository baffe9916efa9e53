"""implementation on a real language server that answers it (basedpyright): the overrides of an
abstract method; one that does not (jedi-language-server) says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.tools.base import ToolError
from agentls.tools.implementation import ImplementationTool
from tests.tools.navigation_support import basedpyright, jedi, shapes_on


async def test_the_implementations_of_an_abstract_method(tmp_path: Path) -> None:
    async with shapes_on(tmp_path, basedpyright) as ctx:
        tool = ImplementationTool()
        raw = {"path": "shapes.py", "symbol": "area", "line": 7}
        out = (await tool.run(tool.parse(raw), ctx)).output
    assert out.startswith("Implementations of `area` at shapes.py:7:9")
    lines = [line.split(":")[0].strip() for line in out.splitlines() if line.startswith("  ")]
    assert {"15", "23"} <= set(lines)  # Square.area and Circle.area


async def test_a_server_without_implementation_says_so(tmp_path: Path) -> None:
    async with shapes_on(tmp_path, jedi) as ctx:
        tool = ImplementationTool()
        with pytest.raises(ToolError, match="does not offer textDocument/implementation"):
            await tool.run(tool.parse({"path": "shapes.py", "symbol": "area", "line": 7}), ctx)
