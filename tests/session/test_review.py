"""Review "after" through the Agent (the real SDK against the local Messages API, a real store,
the disk): later edits keep the first base; undoing one hunk of two writes the rest back and
leaves the other pending; the agent's next edit builds on what the undo left."""

from __future__ import annotations

import asyncio

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory

BEFORE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
FIRST = "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"
SECOND = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"


async def test_undo_one_hunk_then_the_agent_edits_again(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"review": "after"})
    path = h.root / "calc.py"
    path.write_text(BEFORE)
    api.enqueue(
        reply(tool_use("read", {"path": "calc.py"})),
        reply(tool_use("write", {"path": "calc.py", "content": FIRST})),
        reply(tool_use("write", {"path": "calc.py", "content": SECOND})),
        reply(text("done")),
    )
    session = (await h.agent.new_session()).id
    await asyncio.wait_for(h.agent.prompt(session, "change"), 60)
    # Two edits, one pending file: the base is the text before the first.
    [pending] = await h.agent.list_review(session)
    assert (pending.base, pending.agent, len(pending.hunks)) == (BEFORE, SECOND, 2)
    assert len(h.of_type("review")) == 2

    # Undo the second hunk (e): the file keeps a's change; a's hunk is still pending.
    files, conflict = await h.agent.review(session, str(path), "undo", [1])
    assert conflict is None and path.read_text() == FIRST
    [left] = files
    assert (left.base, left.agent) == (BEFORE, FIRST)
    assert [hunk.diff for hunk in left.hunks] == ["@@ -1 +1 @@\n-a = 1\n+a = 10\n"]

    # The model reads the file again and edits it: the pending change grows from the same base.
    api.enqueue(
        reply(tool_use("read", {"path": "calc.py"})),
        reply(tool_use("edit", {"path": "calc.py", "old_string": "b = 2", "new_string": "b = 20"})),
        reply(text("done")),
    )
    await asyncio.wait_for(h.agent.prompt(session, "and b"), 60)
    [grown] = await h.agent.list_review(session)
    assert grown.base == BEFORE and grown.agent == "a = 10\nb = 20\nc = 3\nd = 4\ne = 5\n"
    assert len(grown.hunks) == 1  # a and b are adjacent: one hunk

    # Undo it all: back to the base, nothing pending.
    files, _ = await h.agent.review(session, "calc.py", "undo")
    assert files == [] and path.read_text() == BEFORE


async def test_two_answers_at_once_lose_nothing(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"review": "after"})
    path = h.root / "calc.py"
    path.write_text(BEFORE)
    api.enqueue(
        reply(tool_use("read", {"path": "calc.py"})),
        reply(tool_use("write", {"path": "calc.py", "content": SECOND})),
        reply(text("done")),
    )
    session = (await h.agent.new_session()).id
    await asyncio.wait_for(h.agent.prompt(session, "change"), 60)
    # Two clicks sent before the first answer came back: the first keeps hunk 0 (a), after
    # which the list has one hunk, so the second's index 1 no longer exists and is refused.
    # Kept hunk a is never pending again.
    first, second = await asyncio.gather(
        h.agent.review(session, "calc.py", "keep", [0]),
        h.agent.review(session, "calc.py", "keep", [1]),
        return_exceptions=True,
    )
    assert isinstance(second, ValueError) and "has no hunk 1" in str(second)
    [left] = await h.agent.list_review(session)
    assert left.base == FIRST and [hunk.diff for hunk in left.hunks] == [
        "@@ -5 +5 @@\n-e = 5\n+e = 50\n"
    ]


async def test_undoing_one_hunk_after_the_user_typed_elsewhere_keeps_their_typing_out_of_review(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"review": "after"})
    path = h.root / "far.py"
    before = "a = 1\n\n\n\nc = 3\n\n\n\ne = 5\n"
    agent = "a = 10\n\n\n\nc = 3\n\n\n\ne = 50\n"
    path.write_text(before)
    api.enqueue(
        reply(tool_use("read", {"path": "far.py"})),
        reply(tool_use("write", {"path": "far.py", "content": agent})),
        reply(text("done")),
    )
    session = (await h.agent.new_session()).id
    await asyncio.wait_for(h.agent.prompt(session, "change"), 60)
    path.write_text(agent.replace("c = 3", "c = 'mine'"))  # the user, between the two hunks

    # Undo the first hunk: merged into the user's text, which is kept.
    files, conflict = await h.agent.review(session, str(path), "undo", [0])
    assert conflict is None
    assert path.read_text() == "a = 1\n\n\n\nc = 'mine'\n\n\n\ne = 50\n"
    # What stays pending is the agent's other hunk only: the base took the user's line.
    [left] = files
    assert left.base == "a = 1\n\n\n\nc = 'mine'\n\n\n\ne = 5\n"
    assert [hunk.diff for hunk in left.hunks] == ["@@ -9 +9 @@\n-e = 5\n+e = 50\n"]
