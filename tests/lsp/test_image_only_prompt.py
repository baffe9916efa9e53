"""A prompt of images only (issue 16 item 5): agent/prompt with an empty or blank text and an
image in its context sends a user message of the image block(s) alone (no text block, which the
API refuses), titles the session after the image, and the session exports and is found by that
title; a prompt with neither text nor an image is an Invalid params error naming text."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.lsp.test_images import png


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


async def test_a_prompt_of_one_image_sends_only_the_image(
    editor: Editor, api: MessagesAPIServer
) -> None:
    (editor.root / "screenshot.png").write_bytes(png(12, 9))
    session = await editor.new_session()
    api.enqueue(reply(text("a blue box")))
    context = [{"type": "image", "uri": editor.uri("screenshot.png")}]
    result = await editor.prompt(session, "", context=context)
    assert result["text"] == "a blue box"
    content = api.requests[-1].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image"]
    assert base64.b64decode(content[0]["source"]["data"]) == png(12, 9)

    shown = await editor.request("agent/getMessages", {"sessionId": session})
    assert [p["type"] for p in shown["messages"][0]["parts"]] == ["image"]
    found = await editor.request("agent/listSessions", {"query": "screenshot"})
    assert [s["sessionId"] for s in found["sessions"]] == [session]
    assert found["sessions"][0]["title"] == "screenshot.png"
    markdown = (await editor.request("agent/exportSession", {"sessionId": session}))["markdown"]
    assert markdown.startswith("# screenshot.png\n")
    assert f"Attached image: {editor.uri('screenshot.png')}" in markdown
    assert "a blue box" in markdown

    # The next turn's history still has no text block in that first message.
    api.enqueue(reply(text("yes")))
    await editor.prompt(session, "is it blue?")
    history = api.requests[-1].body["messages"]
    assert [b["type"] for b in history[0]["content"]] == ["image"]


async def test_a_pasted_image_with_blank_text_is_titled_image(
    editor: Editor, api: MessagesAPIServer
) -> None:
    session = await editor.new_session()
    api.enqueue(reply(text("seen")))
    pasted = {"type": "image", "mimeType": "image/png", "data": base64.b64encode(png()).decode()}
    await editor.prompt(session, "  \n ", context=[pasted])
    assert [b["type"] for b in api.requests[-1].body["messages"][0]["content"]] == ["image"]
    listed = await editor.request("agent/listSessions", {})
    assert [s["title"] for s in listed["sessions"] if s["sessionId"] == session] == ["Image"]


async def test_no_text_and_no_image_is_invalid_params_naming_text(
    editor: Editor, api: MessagesAPIServer
) -> None:
    session = await editor.new_session()
    (editor.root / "notes.md").write_text("hello\n")
    for blank, context in [
        ("", None),
        ("   ", None),
        ("", [{"type": "text", "label": "clip", "text": "some text"}]),
        ("", [{"uri": editor.uri("notes.md")}]),
    ]:
        extra: dict[str, Any] = {"context": context} if context is not None else {}
        with pytest.raises(JsonRpcException, match="text: .*needs text, or an image"):
            await editor.prompt(session, blank, **extra)
    assert not api.all_requests
