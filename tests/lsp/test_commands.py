"""Custom commands over LSP: agent/listCommands, a /command through agent/prompt, and an unknown
one answered with an error that names the field (nothing sent to the model)."""

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
    user = tmp_path / "data" / "config" / "agentls" / "commands"
    user.mkdir(parents=True)
    (user / "review.md").write_text("---\ndescription: Review a file\n---\nReview $ARGUMENTS")
    workspace = tmp_path / "ws" / ".agentls" / "commands"
    workspace.mkdir(parents=True)
    (workspace / "ship.md").write_text("Ship it")
    started = await start_editor(tmp_path, api, Profile(), {"workspaceTrusted": False})
    yield started
    await stop_editor(started)


async def test_list_commands_then_trust_adds_the_workspace_ones(editor: Editor) -> None:
    listed = await editor.request("agent/listCommands", {})
    assert [(c["name"], c["source"]) for c in listed["commands"]] == [
        ("clear", "builtin"),
        ("compact", "builtin"),
        ("model", "builtin"),
        ("review", "user"),
    ]
    assert listed["commands"][3]["description"] == "Review a file"
    editor.client.protocol.notify("agent/workspaceTrust", {"trusted": True})
    names = []
    for _ in range(100):  # the notification is handled before the next request
        names = [c["name"] for c in (await editor.request("agent/listCommands", {}))["commands"]]
        if "ship" in names:
            break
    assert names == ["clear", "compact", "model", "review", "ship"]


async def test_a_command_through_prompt_and_an_unknown_one(
    editor: Editor, api: MessagesAPIServer
) -> None:
    session = await editor.new_session()
    api.enqueue(reply(text("reviewed")))
    result = await editor.prompt(session, "/review app.py")
    assert result["text"] == "reviewed"
    assert api.requests[-1].body["messages"][-1]["content"][0]["text"] == "Review app.py"
    with pytest.raises(JsonRpcException, match="text: unknown command /nope.*/review"):
        await editor.prompt(session, "/nope")
    assert len(api.all_requests) == 1
    model = await editor.prompt(session, "/model claude-haiku-4-5")
    assert model["text"] == "The model is now claude-haiku-4-5." and model.get("messageId") is None
