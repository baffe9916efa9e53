"""Custom commands over LSP: agent/listCommands, a /command through agent/prompt, an unknown one
answered with an error that names the field (nothing sent to the model), and a second trusted
workspace folder's Claude Code command whose `!` command runs first as a bash call that asks."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import server_env, start_editor, stop_editor
from tests.lsp.editor import Editor, Profile, make_client


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


async def test_a_second_trusted_folders_command_runs_its_bash_command_through_a_question(
    tmp_path: Path, api: MessagesAPIServer
) -> None:
    app, ops = tmp_path / "app", tmp_path / "ops"
    (app / "a.txt").parent.mkdir(parents=True)
    for name in ("a.txt", "b.txt"):
        (app / name).write_text(name)
    commands = ops / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "count.md").write_text(
        "---\ndescription: Count the files\n---\nFiles: !`ls | wc -l`\nIs that many?"
    )
    client = make_client()
    await client.start_io(
        sys.executable, "-m", "agentls.cli.main", "serve", env=server_env(api, tmp_path / "data")
    )
    editor = Editor(client=client, root=app, profile=Profile())  # answers "once"
    editor.install_handlers()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=editor.profile.capabilities(),
            root_uri=from_fs_path(str(app)),
            workspace_folders=[
                types.WorkspaceFolder(uri=str(from_fs_path(str(app))), name="app"),
                types.WorkspaceFolder(uri=str(from_fs_path(str(ops))), name="ops"),
            ],
            initialization_options={
                "agent": {
                    "model": "claude-sonnet-5-5",
                    "finishGate": "off",
                    "workspaceTrusted": True,
                }
            },
        )
    )
    try:
        listed = await editor.request("agent/listCommands", {})
        assert ("count", "workspace") in [(c["name"], c["source"]) for c in listed["commands"]]
        session = await editor.new_session()
        api.enqueue(reply(text("Two is few.")))
        result = await editor.prompt(session, "/count")
        assert result["text"] == "Two is few."
        (call,) = editor.session_events(session, "tool-call")
        assert (call["tool"], call["input"]) == ("bash", {"command": "ls | wc -l"})
        (asked,) = editor.session_events(session, "permission-request")
        assert asked["callId"] == call["callId"]
        (done,) = editor.session_events(session, "tool-result")
        assert done["callId"] == call["callId"] and not done["isError"]
        sent = api.requests[-1].body["messages"][-1]["content"][0]["text"]
        assert sent.startswith("Files: [output of `ls | wc -l`") and "\n2\n" in sent
    finally:
        await stop_editor(editor)
