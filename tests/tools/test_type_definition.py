"""type_definition on a real language server (jedi-language-server): a variable's type is the
class it was made from, in another file; a library type is shown with its file's full path."""

from __future__ import annotations

from pathlib import Path

from agentls.tools.type_definition import TypeDefinitionTool
from tests.tools.navigation_support import jedi, pyright, shapes_on


async def test_a_variables_type_is_its_class(tmp_path: Path) -> None:
    async with shapes_on(tmp_path, jedi) as ctx:
        tool = TypeDefinitionTool()
        raw = {"path": "report.py", "symbol": "square", "line": 6}
        out = (await tool.run(tool.parse(raw), ctx)).output
    assert out.startswith("Type definition of `square` at report.py:6:")
    assert "shapes.py (1)\n  11: class Square(Shape):" in out


async def test_a_library_type_is_shown_with_its_path(tmp_path: Path) -> None:
    async with shapes_on(tmp_path, pyright) as ctx:
        tool = TypeDefinitionTool()
        raw = {"path": "shapes.py", "symbol": "count", "line": 28}
        out = (await tool.run(tool.parse(raw), ctx)).output
    # int is declared in the typeshed stubs pyright ships: no secret, and the answer.
    assert "builtins.pyi (1)" in out and "class int" in out
    assert "left out" not in out
