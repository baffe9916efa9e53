"""@-mentions over LSP: agent/prompt's context item {type: "text", label, text} (the panel's
@problems, @terminal, @git) reaches the model as a context block under its label, is stored with
the message (agent/getMessages), and is cut past 100,000 characters; a label-less one is an
Invalid params error naming the field. A mentioned file reaches the model as its name in place in
the prompt's sentence (the panel sends "what does src/calc.py do?") and its content as context."""

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
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


async def test_text_items_reach_the_model_and_are_stored(
    editor: Editor, api: MessagesAPIServer
) -> None:
    (editor.root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    session = await editor.new_session()
    api.enqueue(reply(text("fixed")))
    problems = "calc.py:2:5 error: add subtracts [demo]"
    context = [
        {"type": "text", "label": "@problems", "text": problems},
        {"type": "text", "label": "@git", "text": "x" * 100_050},
        {"uri": editor.uri("calc.py")},
    ]
    await editor.prompt(session, "fix these", context=context)
    content = api.requests[-1].body["messages"][0]["content"]
    assert content[0] == {
        "type": "text",
        "text": f'<context uri="@problems">\n{problems}\n</context>',
    }
    assert content[1]["text"].endswith("x\n... (cut)\n</context>")
    assert len(content[1]["text"]) < 100_100
    assert "return a - b" in content[2]["text"]
    assert content[3]["text"] == "fix these"
    shown = await editor.request("agent/getMessages", {"sessionId": session})
    parts = shown["messages"][0]["parts"]
    assert [p["type"] for p in parts] == ["context", "context", "context", "text"]
    assert parts[0] == {"type": "context", "uri": "@problems", "text": problems}


async def test_a_mentioned_file_is_named_in_place_and_its_content_is_context(
    editor: Editor, api: MessagesAPIServer
) -> None:
    (editor.root / "src").mkdir()
    (editor.root / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    session = await editor.new_session()
    api.enqueue(reply(text("It subtracts.")))
    await editor.prompt(
        session, "what does src/calc.py do?", context=[{"uri": editor.uri("src/calc.py")}]
    )
    content = api.requests[-1].body["messages"][0]["content"]
    assert [block["type"] for block in content] == ["text", "text"]
    context, sentence = content[0]["text"], content[1]["text"]
    uri = editor.uri("src/calc.py")
    assert context == f'<context uri="{uri}">\ndef add(a, b):\n    return a - b\n\n</context>'
    assert sentence == "what does src/calc.py do?"  # the name where the user put the mention
    assert uri.endswith("/" + "src/calc.py")  # the same file the context block names


async def test_a_text_item_without_a_label_is_refused(
    editor: Editor, api: MessagesAPIServer
) -> None:
    session = await editor.new_session()
    for item, field in [
        ({"type": "text", "text": "x"}, "label"),
        ({"type": "text", "label": "", "text": "x"}, "label"),
        ({"type": "text", "label": "@git"}, "text"),
    ]:
        with pytest.raises(JsonRpcException, match=field):
            await editor.prompt(session, "hi", context=[item])
    assert api.requests == []
