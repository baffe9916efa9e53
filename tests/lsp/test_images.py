"""Images over LSP: agent/prompt's context item {type: "image"} with data or a workspace uri,
sent to the model as an image block and shown again by agent/getMessages; a file outside the
workspace, a secret or a corrupt image is an Invalid params error naming the item (nothing sent)."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from PIL import Image
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


def png(width: int = 8, height: int = 6) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (0, 90, 200)).save(out, format="PNG")
    return out.getvalue()


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


async def test_pasted_and_file_images_are_sent_and_shown_again(
    editor: Editor, api: MessagesAPIServer
) -> None:
    (editor.root / "shot.png").write_bytes(png(10, 10))
    pasted = base64.b64encode(png()).decode()
    session = await editor.new_session()
    api.enqueue(reply(text("two blue boxes")))
    context = [
        {"type": "image", "mimeType": "image/png", "data": pasted},
        {"type": "image", "uri": editor.uri("shot.png")},
    ]
    result = await editor.prompt(session, "what are these?", context=context)
    assert result["text"] == "two blue boxes"
    content = api.requests[-1].body["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "image", "text"]
    assert content[0]["source"]["data"] == pasted
    assert base64.b64decode(content[1]["source"]["data"]) == png(10, 10)
    shown = await editor.request("agent/getMessages", {"sessionId": session})
    parts = shown["messages"][0]["parts"]
    assert [p["type"] for p in parts] == ["image", "image", "text"]
    assert parts[0] == {"type": "image", "mediaType": "image/png", "data": pasted}
    assert parts[1]["uri"] == editor.uri("shot.png")


async def test_refused_images_are_invalid_params_naming_the_item(
    editor: Editor, api: MessagesAPIServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.png"
    outside.write_bytes(png())
    (editor.root / ".env.png").write_bytes(png())
    (editor.root / "broken.png").write_bytes(png()[:40])
    session = await editor.new_session()
    cases = [
        ({"type": "image", "uri": outside.as_uri()}, "context.0: .*outside the workspace"),
        ({"type": "image", "uri": editor.uri(".env.png")}, "context.0: .*not read without asking"),
        (
            {"type": "image", "uri": editor.uri("broken.png")},
            "context.0: broken.png is not attached: it is not an image",
        ),
        ({"type": "image", "mimeType": "image/png", "data": "bm90IGFuIGltYWdl"}, "not an image"),
        ({"type": "image", "data": "eA=="}, "mimeType"),
        ({"type": "image"}, "either data .* or a uri"),
    ]
    for item, message in cases:
        with pytest.raises(JsonRpcException, match=message):
            await editor.prompt(session, "look", context=[item])
    assert not api.all_requests
