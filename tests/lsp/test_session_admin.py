"""Managing sessions over LSP: agent/listSessions {query} (FTS5 over message text),
agent/renameSession, agent/forkSession (the fork's next turn sends the history up to the
message), agent/exportSession (Markdown), agent/deleteSession (gone from the store); bad params
are errors naming the field."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile(), {})
    yield started
    await stop_editor(started)


async def titles(editor: Editor, query: str | None = None) -> list[str]:
    params = {} if query is None else {"query": query}
    listed = await editor.request("agent/listSessions", params)
    return [s["title"] for s in listed["sessions"]]


async def test_search_rename_fork_export_delete(editor: Editor, api: MessagesAPIServer) -> None:
    first = await editor.new_session("Parser work")
    api.enqueue(reply(text("The lexer drops the quote.")))
    api.enqueue(reply(text("Fixed it.")))
    await editor.prompt(first, "Why does parsing fail?")
    await editor.prompt(first, "Fix it")
    other = await editor.new_session("Docs")
    assert await titles(editor, "lexer") == ["Parser work"]
    assert await titles(editor, "parser") == ["Parser work"]
    assert sorted(await titles(editor, "  ")) == ["Docs", "Parser work"]

    renamed = await editor.request("agent/renameSession", {"sessionId": other, "title": "Guide"})
    assert renamed == {"title": "Guide"}
    assert "Guide" in await titles(editor)

    history = await editor.request("agent/getMessages", {"sessionId": first})
    answer = history["messages"][1]
    assert answer["role"] == "assistant"
    fork = await editor.request(
        "agent/forkSession", {"sessionId": first, "messageId": answer["id"]}
    )
    assert fork["title"] == "Fork of Parser work"
    copied = await editor.request("agent/getMessages", {"sessionId": fork["sessionId"]})
    assert [m["parts"] for m in copied["messages"]] == [m["parts"] for m in history["messages"][:2]]
    api.enqueue(reply(text("From the fork.")))
    await editor.prompt(fork["sessionId"], "Try another way")
    sent = api.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "Fix it" not in str(sent)

    exported = await editor.request("agent/exportSession", {"sessionId": first})
    markdown = exported["markdown"]
    assert markdown.startswith("# Parser work\n")
    assert "## User\n\nWhy does parsing fail?" in markdown
    assert "## Assistant\n\nThe lexer drops the quote." in markdown

    deleted = await editor.request("agent/deleteSession", {"sessionId": first})
    assert deleted == {"deleted": [first]}
    assert "Parser work" not in await titles(editor)
    assert await titles(editor, "lexer") == ["Fork of Parser work"]  # the copy stays
    with pytest.raises(JsonRpcException, match="sessionId"):
        await editor.request("agent/getMessages", {"sessionId": first})


async def test_bad_params_name_the_field(editor: Editor) -> None:
    session = await editor.new_session("S")
    with pytest.raises(JsonRpcException, match="title"):
        await editor.request("agent/renameSession", {"sessionId": session, "title": " \n"})
    with pytest.raises(JsonRpcException, match="title"):
        await editor.request("agent/renameSession", {"sessionId": session})
    with pytest.raises(JsonRpcException, match="sessionId"):
        await editor.request("agent/renameSession", {"sessionId": "nope", "title": "x"})
    with pytest.raises(JsonRpcException, match="messageId"):
        await editor.request("agent/forkSession", {"sessionId": session, "messageId": "msg_no"})
    with pytest.raises(JsonRpcException, match="sessionId"):
        await editor.request("agent/forkSession", {"sessionId": "nope", "messageId": "msg_no"})
    with pytest.raises(JsonRpcException, match="sessionId"):
        await editor.request("agent/deleteSession", {"sessionId": "nope"})
    with pytest.raises(JsonRpcException, match="sessionId"):
        await editor.request("agent/exportSession", {})
