"""A project on a real language server (jedi-language-server) for the tests of references and
callers: the shop project of tests/language, and a `tick` called in many modules."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentls.verify.workspace import DiskWorkspace
from tests.language.conftest import jedi_settings, make_project
from tests.tools.conftest import RunTool, ToolTestContext

USES = 6  # calls of `tick` in each user module
MODULES = 14  # 84 calls: more than an answer shows


def make_clock(root: Path) -> None:
    (root / "clock.py").write_text("def tick(n):\n    return n + 1\n")
    for m in range(MODULES):
        calls = "\n".join(f"    tick({k})" for k in range(USES))
        (root / f"user_{m:02}.py").write_text(f"from clock import tick\n\n\ndef use():\n{calls}\n")


@pytest.fixture
async def lctx(tmp_path: Path) -> AsyncIterator[ToolTestContext]:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    make_project(root)
    make_clock(root)
    workspace = DiskWorkspace(root, jedi_settings)
    context = ToolTestContext(root, workspace)
    yield context
    await workspace.languages.aclose()


@pytest.fixture
def lrun(lctx: ToolTestContext) -> RunTool:
    async def _run(tool, **raw):  # type: ignore[no-untyped-def]
        return await tool.run(tool.parse(raw), lctx)

    return _run


def places(output: str) -> set[tuple[str, int]]:
    """(file, line) of every place an answer shows."""
    found, current = set(), ""
    for line in output.splitlines():
        group = re.match(r"^(\S+\.py) \(\d+\)$", line)
        if group:
            current = group.group(1)
        place = re.match(r"^  (\d+): ", line)
        if place and current:
            found.add((current, int(place.group(1))))
    return found
