"""Reverts through the Agent: what the sub-agents it started did counts (their file changes are
restored and their bash commands listed; they are stored under their own sessions), and a busy
session (a turn running here, or in another process) is refused."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agentls.session import SessionBusyError
from agentls.session.revert import checkpoints_of
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
    first, second = [m.id for m in checkpoints_of(await h.agent.history(session))]

    # A checkpoint after the sub-agent's work touches nothing of it.
    api.enqueue(reply(text("later")))
    await asyncio.wait_for(h.agent.prompt(session, "later"), 30)
    third = (checkpoints_of(await h.agent.history(session)))[-1].id
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


async def test_a_busy_session_is_not_reverted(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(text("first")))
    session = (await h.agent.new_session()).id
    await asyncio.wait_for(h.agent.prompt(session, "one"), 30)
    [checkpoint] = checkpoints_of(await h.agent.history(session))
    hold = threading.Event()
    api.enqueue(reply(text("a long answer"), chunk_size=4, hold=hold, hold_after=5))
    turn = asyncio.create_task(h.agent.prompt(session, "two"))
    await h.wait_for("text-delta")
    try:
        with pytest.raises(SessionBusyError, match="busy"):
            await h.agent.revert(session, checkpoint.id)
        with pytest.raises(SessionBusyError, match="busy"):
            await h.agent.unrevert(session)
    finally:
        hold.set()
        await asyncio.wait_for(turn, 10)
    # A turn of it in another process (its lock in the store) is refused the same way.
    await h.store.lock_session(session, "another-process-owner")
    try:
        with pytest.raises(SessionBusyError):
            await h.agent.revert(session, checkpoint.id)
    finally:
        await h.store.unlock_session(session, "another-process-owner")
    assert not any(m.reverted for m in await h.store.load_messages(session))
    outcome = await h.agent.revert(session, checkpoint.id)
    assert outcome.prompt == "one"
