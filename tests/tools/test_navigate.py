"""references and callers on a real language server (jedi-language-server): every file listed
with its count before the places, `include` (a glob) to see the places a long answer leaves out,
and callers from references that skip imports and count each function once."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentls.language.render import MAX_HITS
from agentls.tools.callers import CallersTool
from agentls.tools.references import ReferencesTool
from agentls.verify.workspace import DiskWorkspace
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.language.conftest import jedi_settings, language_servers, make_project
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


async def test_a_long_answer_lists_every_file_and_include_shows_the_rest(lrun: RunTool) -> None:
    first = await lrun(ReferencesTool(), path="clock.py", symbol="tick")
    out = first.output
    assert f"{1 + MODULES * (USES + 1)} places in {MODULES + 1} files" in out
    # Every file with its count, before the places: even those whose places are not shown.
    for m in range(MODULES):
        assert f"  user_{m:02}.py: {USES + 1}\n" in out
    assert out.index("Files:") < out.index("clock.py (1)")
    assert "narrow it with include" in out
    shown = places(out)
    assert len(shown) == MAX_HITS
    # The rest, file by file: every place of the answer is read in full.
    seen = set(shown)
    for m in range(MODULES):
        part = await lrun(
            ReferencesTool(), path="clock.py", symbol="tick", include=f"user_{m:02}.py"
        )
        assert f"{USES + 1} places in 1 file matching 'user_{m:02}.py'" in part.output
        seen |= places(part.output)
    assert len(seen) == 1 + MODULES * (USES + 1)


async def test_include_is_a_glob_relative_to_the_workspace(
    lrun: RunTool, lctx: ToolTestContext
) -> None:
    out = (
        await lrun(ReferencesTool(), path="clock.py", symbol="tick", include="user_0*.py")
    ).output
    assert f"{10 * (USES + 1)} places in 10 files matching 'user_0*.py'" in out
    assert f"({1 + 4 * (USES + 1)} more in other files)" in out
    absolute = await lrun(
        ReferencesTool(), path="clock.py", symbol="tick", include=f"{lctx.root}/user_0*.py"
    )
    assert f"{10 * (USES + 1)} places in 10 files" in absolute.output
    none = await lrun(ReferencesTool(), path="clock.py", symbol="tick", include="src/**")
    assert "0 places in files matching 'src/**'" in none.output


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


async def test_a_long_references_answer_is_read_in_full_through_the_loop(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    """The model asks for references, is shown part of them with every file's count, and asks
    again for each file it was not shown."""
    h = await make_harness({"languageServers": language_servers()})
    make_clock(h.root)
    asked = {"path": "clock.py", "symbol": "tick"}

    def each_file_left(body: dict[str, Any]) -> Any:
        told = str(body["messages"][-1]["content"][0]["content"])
        listed = re.findall(r"^  (\S+\.py): (\d+)$", told, re.M)
        shown = places(told)
        missing = [f for f, n in listed if len({p for p in shown if p[0] == f}) < int(n)]
        assert missing, told
        return reply(*(tool_use("references", {**asked, "include": f}) for f in missing))

    api.enqueue(reply(tool_use("references", asked)), each_file_left, reply(text("done")))
    session = await h.agent.new_session()
    result = await asyncio.wait_for(h.agent.prompt(session.id, "where is tick used?"), 120)
    assert result.text == "done", result.error
    bodies = h.accepted_requests()
    seen = places(str(bodies[1]["messages"][-1]["content"][0]["content"]))
    for block in bodies[2]["messages"][-1]["content"]:
        seen |= places(str(block["content"]))
    assert len(seen) == 1 + MODULES * (USES + 1)
