"""outline on real language servers: a file's classes, functions and methods as an indented
tree with line ranges, a function's locals left out; and its rendering of what servers send."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.tools.base import ToolError
from agentls.tools.outline import OutlineTool, outline_entries, render_outline
from tests.tools.navigation_support import jedi, pyright, shapes_on

TREE = """class Shape 5-8
  method area 6-8
class Square 11-16
  method __init__ 12-13
  {field} side 13
  method area 15-16
class Circle 19-24
  method __init__ 20-21
  {field} radius 21
  method area 23-24
function total 27-31"""


@pytest.mark.parametrize("server", [jedi, pyright], ids=["jedi", "pyright"])
async def test_the_outline_is_the_files_tree_with_line_ranges(tmp_path: Path, server) -> None:  # type: ignore[no-untyped-def]
    async with shapes_on(tmp_path, server) as ctx:
        tool = OutlineTool()
        out = (await tool.run(tool.parse({"path": "shapes.py"}), ctx)).output
    assert out.startswith("shapes.py (31 lines), ")
    # The abstract method's range starts at its decorator (pyright's does; jedi's starts at
    # `def`, and is extended). jedi calls an attribute set in __init__ a property, pyright a
    # variable.
    field = "property" if server is jedi else "variable"
    assert TREE.format(field=field) in out
    # The locals of total (count, shape) are no structure; nor is what `import abc` brings in
    # (jedi lists it as a module).
    assert "count" not in out and "variable shape" not in out
    assert "abc" not in out


async def test_outline_of_a_missing_file_says_so(tmp_path: Path) -> None:
    async with shapes_on(tmp_path, jedi) as ctx:
        tool = OutlineTool()
        with pytest.raises(ToolError, match="File not found: nope.py"):
            await tool.run(tool.parse({"path": "nope.py"}), ctx)


def test_flat_symbol_information_and_the_cap_are_rendered() -> None:
    def info(name: str, kind: int, first: int, last: int) -> dict[str, object]:
        rng = {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}
        return {"name": name, "kind": kind, "location": {"uri": "file:///a.py", "range": rng}}

    # A range ending at the start of the next line ends on the line before.
    entries = outline_entries([info("later", 12, 9, 12), info("first", 5, 0, 4), {"name": 3}])
    assert render_outline(entries) == "class first 1-4\nfunction later 10-12"
    many = outline_entries([info(f"f{n}", 12, n, n) for n in range(5)])
    assert render_outline(many, cap=3).splitlines()[-1] == (
        "... 2 more; read the rest of the file by ranges."
    )
