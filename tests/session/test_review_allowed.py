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
