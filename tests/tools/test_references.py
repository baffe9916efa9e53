"""references on a real language server (jedi-language-server): every file listed with its
count before the places, and `include` (a glob) to see the places a long answer leaves out."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from agentls.language.render import MAX_HITS
from agentls.tools.references import ReferencesTool
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.language.conftest import language_servers
from tests.tools.conftest import RunTool, ToolTestContext
from tests.tools.language_support import MODULES, USES, make_clock, places


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
