"""Instructions: AGENTS.md (else CLAUDE.md) at the workspace root and in the config home go into
the system prompt, and an edit is used by the very next step."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from agentls.session.instructions import Instructions
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in body["system"])


async def test_project_and_global_instructions_are_in_the_system_prompt(
    make_harness: HarnessFactory, api: MessagesAPIServer, _isolated_config_home: Path
) -> None:
    h = await make_harness()
    (h.root / "CLAUDE.md").write_text("Claude rule: tabs.\n")
    _isolated_config_home.mkdir(parents=True)
    (_isolated_config_home / "AGENTS.md").write_text("Global rule: be terse.\n")
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "one")
    first = system_text(h.accepted_requests()[0])
    assert "Claude rule: tabs." in first and "Global rule: be terse." in first
    assert first.index("Global rule") < first.index("Claude rule")  # the project's comes last
    # AGENTS.md wins over CLAUDE.md in the same place.
    (h.root / "AGENTS.md").write_text("Agents rule: spaces.\n")
    await h.agent.prompt(session.id, "two")
    second = system_text(h.accepted_requests()[1])
    assert "Agents rule: spaces." in second and "Claude rule" not in second
    assert "Global rule: be terse." in second
    # The instructions are their own system block, after the base prompt (which holds the date).
    assert h.accepted_requests()[1]["system"][-1]["text"].startswith("Instructions from")


async def test_no_instructions_files_no_instructions_block(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "hi")
    assert len(h.accepted_requests()[0]["system"]) == 1


async def test_an_edit_between_two_steps_reaches_the_next_step(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    instructions = h.root / "AGENTS.md"
    instructions.write_text("Rule version one.\n")
    (h.root / "x.txt").write_text("x\n")

    def edit_instructions_then_call_a_tool(body: dict[str, Any]) -> Any:
        instructions.write_text("Rule version two, longer than the first.\n")
        return reply(tool_use("read", {"path": "x.txt"}))

    api.enqueue(
        edit_instructions_then_call_a_tool,
        reply(tool_use("list", {})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn"
    bodies = h.accepted_requests()
    assert "Rule version one." in system_text(bodies[0])
    assert "Rule version two" in system_text(bodies[1]) and "version one" not in system_text(
        bodies[1]
    )
    # Unchanged file: the next step's system prompt is byte for byte the same (cache-stable).
    assert bodies[2]["system"] == bodies[1]["system"]


async def test_the_watcher_notices_an_edit_the_stat_cannot_see(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    instructions = h.root / "AGENTS.md"
    instructions.write_text("Use style AAAA.\n")
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "one")  # starts the watcher
    watcher: Instructions = h.agent.instructions
    assert "AAAA" in (watcher.text() or "")
    await asyncio.wait_for(watcher.watching.wait(), 10)
    before = os.stat(instructions)
    # Same size, same inode, and the old mtime put back: only the watcher can tell.
    with instructions.open("r+") as handle:
        handle.write("Use style BBBB.\n")
    os.utime(instructions, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(instructions)
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (
        before.st_mtime_ns,
        before.st_size,
        before.st_ino,
    )

    async def noticed() -> None:
        while watcher.changes == 0:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(noticed(), 10)
    await h.agent.prompt(session.id, "two")
    assert "BBBB" in system_text(h.accepted_requests()[1])
    await h.agent.aclose()
    assert watcher._task is None


def test_instructions_text_is_cached_until_a_file_changes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    instructions = Instructions(root, tmp_path / "global")
    assert instructions.text() is None
    (root / "AGENTS.md").write_text("one\n")
    first = instructions.text()
    assert first is not None and "one" in first
    reloads = instructions.reloads
    assert instructions.text() is first and instructions.reloads == reloads
    (root / "AGENTS.md").write_text("two!\n")
    assert "two!" in (instructions.text() or "")
    (root / "AGENTS.md").unlink()
    assert instructions.text() is None


async def test_without_the_watcher_an_edit_is_still_seen_by_the_next_step(tmp_path: Path) -> None:
    # What `agentls run` uses: no watcher task (nor watchfiles import), the stat check alone.
    root = tmp_path / "ws"
    root.mkdir()
    instructions = Instructions(root, tmp_path / "global", watch=False)
    (root / "AGENTS.md").write_text("Use style AAAA.\n")
    base = [{"type": "text", "text": "base"}]
    assert "AAAA" in instructions.system(base)[-1]["text"]
    assert instructions._task is None
    (root / "AGENTS.md").write_text("Use style BBBBBB.\n")
    assert "BBBBBB" in instructions.system(base)[-1]["text"]
    assert instructions._task is None
    await instructions.aclose()
