"""A project on real language servers for the navigation tools (outline, type_definition,
implementation, callees): an abstract Shape with two implementations, and functions that call
them. The servers: jedi-language-server and basedpyright (the dev dependencies install both
into the venv), pyright (npm, make pyright-deps)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.verify.workspace import DiskWorkspace
from tests.language.test_pyright import PYRIGHT
from tests.tools.conftest import ToolTestContext

SHAPES = '''"""Shapes."""
import abc


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self) -> float:
        """The area."""


class Square(Shape):
    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        return self.side * self.side


class Circle(Shape):
    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        return 3.14 * self.radius * self.radius


def total(shapes: list[Shape]) -> float:
    count = 0
    for shape in shapes:
        count += 1
    return sum(shape.area() for shape in shapes)
'''

REPORT = """from shapes import Circle, Square, total


def report() -> str:
    square = Square(2)
    shapes = [square, Circle(1)]
    return f"{total(shapes):.2f} {len(shapes)}"
"""


def make_shapes(root: Path) -> None:
    (root / "shapes.py").write_text(SHAPES)
    (root / "report.py").write_text(REPORT)


def _venv_program(name: str) -> str:
    program = Path(sys.executable).with_name(name)
    if not program.exists():
        pytest.fail(f"{name} is not installed (pip install -e '.[dev]')")
    return str(program)


def jedi() -> list[str]:
    return [_venv_program("jedi-language-server")]


def basedpyright() -> list[str]:
    return [_venv_program("basedpyright-langserver"), "--stdio"]


def pyright() -> list[str]:
    if not PYRIGHT.exists():
        pytest.fail("pyright is not installed: make pyright-deps")
    return [str(PYRIGHT), "--stdio"]


def server_settings(command: list[str]) -> Settings:
    return Settings.model_validate(
        {"languageServers": {"python": {"command": command, "extensions": [".py"]}}}
    )


@asynccontextmanager
async def shapes_on(root: Path, server: Callable[[], list[str]]) -> AsyncIterator[ToolTestContext]:
    """The shapes project in `root`, its .py files answered by `server`, stopped after."""
    make_shapes(root)
    settings = server_settings(server())
    workspace = DiskWorkspace(root, lambda: settings)
    try:
        yield ToolTestContext(root, workspace)
    finally:
        await workspace.languages.aclose()
