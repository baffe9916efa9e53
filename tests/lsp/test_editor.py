"""The editor's context items over LSP (lsp/editor.py hands them to the Agent, which reads and
checks them): a file open in the editor is attached as its buffer's unsaved text, a selection is
cut in the client's UTF-16 units, and agent.runOnSelection on a link to a secret sends nothing
and says why in the session's error event."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from lsprotocol import types

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

SECRET = "sk-live-context-item-7731"


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


def position(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


async def test_an_open_file_is_its_unsaved_text_and_a_selection_counts_utf16_units(
    editor: Editor, api: MessagesAPIServer
) -> None:
    (editor.root / "emoji.py").write_text("saved = 1\n")
    editor.open("emoji.py")
    # 😀 is one code point and two UTF-16 units: "tail" starts at unit 13, code point 12.
    editor.type_text("emoji.py", "face = '😀'; tail\nsecond line\n")
    session = await editor.new_session()
    api.enqueue(reply(text("a face")), reply(text("a tail")))

    await editor.prompt(session, "what is here?", context=[{"uri": editor.uri("emoji.py")}])
    whole = api.requests[-1].body["messages"][0]["content"][0]["text"]
    assert "face = '😀'; tail\nsecond line" in whole and "saved = 1" not in whole

    selection = {"start": position(0, 13), "end": position(0, 17)}
    context = [{"uri": editor.uri("emoji.py"), "range": selection}]
    await editor.prompt(session, "and this?", context=context)
    block = api.requests[-1].body["messages"][-1]["content"][0]["text"]
    assert block == f'<context uri="{editor.uri("emoji.py")} lines 1-1">\ntail\n</context>'


async def test_run_on_selection_in_a_link_to_a_secret_sends_nothing_and_says_why(
    editor: Editor, api: MessagesAPIServer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-home"
    outside.mkdir()
    (outside / "credentials").write_text(f"aws_secret_access_key = {SECRET}\n")
    (editor.root / "notes.md").symlink_to(outside / "credentials")
    editor.open("notes.md")
    session = await editor.new_session()
    args = {
        "uri": editor.uri("notes.md"),
        "range": {"start": position(0, 0), "end": position(1, 0)},
        "instruction": "Explain the selected code.",
        "sessionId": session,
    }
    started = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.runOnSelection", arguments=[args])
    )
    assert started["sessionId"] == session
    error = await editor.wait_event(session, "error")
    assert (
        "notes.md is a link to" in error["message"] and "outside the workspace" in error["message"]
    )
    assert SECRET not in json.dumps([r.body for r in api.requests])
    assert api.requests == []
