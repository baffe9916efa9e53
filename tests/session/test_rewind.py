"""A revert through the Agent covers what the sub-agents it started did: their file changes are
restored and their bash commands listed (they are stored under their own sessions)."""

from __future__ import annotations

import asyncio

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


async def test_a_revert_restores_what_a_sub_agent_changed(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    writer = {"description": "writes", "prompt": "You write.", "tools": ["read", "write", "bash"]}
    h = await make_harness({"agents": {"writer": writer}, "permissions": {"*": "allow"}})
    (h.root / "notes.txt").write_text("old notes\n")
    task = {"description": "note", "prompt": "Rewrite notes.txt", "agent": "writer"}
    api.enqueue(
        reply(text("nothing yet")),
        reply(tool_use("task", task)),
        reply(tool_use("read", {"path": "notes.txt"})),
        reply(
            tool_use("write", {"path": "notes.txt", "content": "new notes\n"}),
            tool_use("bash", {"command": "echo sub > sub.txt"}),
        ),
        reply(text("rewritten")),
        reply(text("done")),
    )
    session = (await h.agent.new_session()).id
    await asyncio.wait_for(h.agent.prompt(session, "hello"), 30)
    await asyncio.wait_for(h.agent.prompt(session, "have notes rewritten"), 30)
    assert (h.root / "notes.txt").read_text() == "new notes\n"
    first, second = [m.id for m in await h.agent.checkpoints(session)]

    # A checkpoint after the sub-agent's work touches nothing of it.
    api.enqueue(reply(text("later")))
    await asyncio.wait_for(h.agent.prompt(session, "later"), 30)
    third = (await h.agent.checkpoints(session))[-1].id
    later = await h.agent.revert(session, third, dry_run=True)
    assert later.files == [] and later.bash_commands == []

    outcome = await h.agent.revert(session, second)
    assert outcome.files == [str(h.root / "notes.txt")]
    assert outcome.bash_commands == ["echo sub > sub.txt"]
    assert (h.root / "notes.txt").read_text() == "old notes\n"
    assert (h.root / "sub.txt").exists()
    await h.agent.unrevert(session)
    assert (h.root / "notes.txt").read_text() == "new notes\n"
    assert (await h.agent.revert(session, first, dry_run=True)).files == [str(h.root / "notes.txt")]
