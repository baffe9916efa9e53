"""Review "after" shows every change the agent made: an edit a rule allows is applied at once, as
always, and is pending review too; without "after" an allowed edit is never pending."""

from __future__ import annotations

import asyncio

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


@pytest.mark.parametrize("review", ["after", "before"])
async def test_an_allowed_edit_is_pending_review_only_after(
    make_harness: HarnessFactory, api: MessagesAPIServer, review: str
) -> None:
    h = await make_harness({"review": review, "permissions": {"edit": "allow"}})
    path = h.root / "notes.txt"
    path.write_text("one\ntwo\n")
    api.enqueue(
        reply(tool_use("read", {"path": "notes.txt"})),
        reply(tool_use("edit", {"path": "notes.txt", "old_string": "two", "new_string": "2"})),
        reply(text("done")),
    )
    session = (await h.agent.new_session()).id
    await asyncio.wait_for(h.agent.prompt(session, "change"), 60)
    assert path.read_text() == "one\n2\n"
    assert not h.of_type("permission-request")  # allowed: never asked, either way
    pending = await h.agent.list_review(session)
    if review == "after":
        [file] = pending
        assert (file.base, file.agent) == ("one\ntwo\n", "one\n2\n")
    else:
        assert pending == []


async def test_a_code_revert_and_its_redo_keep_the_review_true_to_the_file(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"review": "after"})
    path = h.root / "calc.py"
    path.write_text("a = 1\nb = 2\n")
    api.enqueue(
        reply(tool_use("read", {"path": "calc.py"})),
        reply(tool_use("write", {"path": "calc.py", "content": "a = 10\nb = 2\n"})),
        reply(text("first")),
        reply(tool_use("read", {"path": "calc.py"})),
        reply(tool_use("write", {"path": "calc.py", "content": "a = 10\nb = 20\n"})),
        reply(text("second")),
    )
    session = (await h.agent.new_session()).id
    await asyncio.wait_for(h.agent.prompt(session, "a"), 60)
    await asyncio.wait_for(h.agent.prompt(session, "b"), 60)
    second_prompt = [m for m in (await h.agent.session(session)).messages if m.role == "user"][1]

    # Back to before "b", code only: the file loses b's change; the review shows base -> now.
    await h.agent.revert(session, second_prompt.id, scope="code")
    assert path.read_text() == "a = 10\nb = 2\n"
    [pending] = await h.agent.list_review(session)
    assert (pending.base, pending.agent) == ("a = 1\nb = 2\n", "a = 10\nb = 2\n")

    # The redo puts b back, and the review follows again.
    await h.agent.unrevert(session)
    assert path.read_text() == "a = 10\nb = 20\n"
    [pending] = await h.agent.list_review(session)
    assert pending.agent == "a = 10\nb = 20\n"
    # An undo now matches the file: no conflict, back to the base.
    files, conflict = await h.agent.review(session, "calc.py", "undo")
    assert conflict is None and files == [] and path.read_text() == "a = 1\nb = 2\n"
