"""Every workspace folder over LSP: a second folder of initialize's workspaceFolders is as much
inside as the first (read and edit without a question the first folder would not ask, its
protected paths and AGENTS.md its own), a path outside both is still refused, and a folder
workspace/didChangeWorkspaceFolders adds is inside from then on."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import server_env, stop_editor
from tests.lsp.editor import Editor, Profile, make_client

pytestmark = pytest.mark.asyncio(loop_scope="module")

OPTIONS = {
    "model": "claude-sonnet-5-5",
    "apiRetryBaseDelayS": 0.01,
    "verifyWaitS": 1.0,
    "permissions": {"read": "allow", "edit": "allow"},
}


def folder(path: Path, name: str) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=str(from_fs_path(str(path))), name=name)


@pytest.fixture(scope="module")
def folders(module_root: Path) -> dict[str, Path]:
    out = {name: module_root / "folders" / name for name in ("app", "lib", "extra", "away")}
    for path in out.values():
        path.mkdir(parents=True)
    (out["app"] / "main.py").write_text("import util\n")
    (out["lib"] / "util.py").write_text("VALUE = 1\n")
    (out["lib"] / "AGENTS.md").write_text("Library rule: keep util.py free of imports.\n")
    (out["lib"] / ".git" / "hooks").mkdir(parents=True)
    (out["extra"] / "notes.txt").write_text("extra notes\n")
    (out["away"] / "secret.txt").write_text("not in the workspace\n")
    return out


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    module_root: Path, module_api: MessagesAPIServer, folders: dict[str, Path]
) -> AsyncIterator[Editor]:
    """An editor with two workspace folders, app and lib; it answers no question itself."""
    client = make_client()
    await client.start_io(
        sys.executable, "-m", "agentls.cli.main", "serve", env=server_env(module_api, module_root)
    )
    ed = Editor(client=client, root=folders["app"], profile=Profile())
    ed.auto_approve = False
    ed.install_handlers()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=ed.profile.capabilities(),
            root_uri=from_fs_path(str(folders["app"])),
            workspace_folders=[folder(folders["app"], "app"), folder(folders["lib"], "lib")],
            initialization_options={"agent": OPTIONS},
        )
    )
    yield ed
    await stop_editor(ed)


def tool_results(api: MessagesAPIServer) -> list[dict[str, Any]]:
    """The tool results of the last request, in order."""
    content = api.requests[-1].body["messages"][-1]["content"]
    return [block for block in content if block.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else json.dumps(content)


async def test_a_file_in_the_second_folder_is_read_and_edited_without_a_question(
    editor: Editor, module_api: MessagesAPIServer, folders: dict[str, Path]
) -> None:
    module_api.enqueue(
        reply(tool_use("read", {"path": "lib/util.py"})),
        reply(
            tool_use("edit", {"path": "lib/util.py", "old_string": "1", "new_string": "2"}),
        ),
        reply(tool_use("glob", {"pattern": "**/*.py"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "change the value")
    assert (folders["lib"] / "util.py").read_text() == "VALUE = 2\n"
    assert editor.session_events(session, "permission-request") == []
    read, edit, found = (result_text(r) for r in _results_of_turn(module_api, 3))
    assert "VALUE = 1" in read
    assert "lib/util.py" in edit
    # Every folder's files, each named by its folder.
    assert "app/main.py" in found and "lib/util.py" in found


def _results_of_turn(api: MessagesAPIServer, count: int) -> list[dict[str, Any]]:
    """The first tool result of each of the last `count` steps' requests."""
    out = []
    for request in api.requests[-count:]:
        blocks = request.body["messages"][-1]["content"]
        out += [b for b in blocks if b.get("type") == "tool_result"][:1]
    return out


async def test_the_second_folders_agents_md_is_in_the_prompt(
    editor: Editor, module_api: MessagesAPIServer
) -> None:
    module_api.enqueue(reply(text("ok")))
    session = await editor.new_session()
    await editor.prompt(session, "hello")
    system = json.dumps(module_api.requests[-1].body["system"])
    assert "Library rule: keep util.py free of imports." in system
    assert "lib/AGENTS.md" in system
    assert "<workspace_folders>" in system


async def test_a_path_outside_both_folders_is_refused(
    editor: Editor, module_api: MessagesAPIServer, folders: dict[str, Path]
) -> None:
    module_api.enqueue(
        reply(tool_use("read", {"path": str(folders["away"] / "secret.txt")})),
        reply(text("ok")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "read it")
    (result,) = tool_results(module_api)
    assert result.get("is_error") is True
    assert "outside the workspace" in result_text(result)
    assert "not in the workspace" not in result_text(result)


async def test_the_second_folders_git_hooks_are_protected(
    editor: Editor, module_api: MessagesAPIServer, folders: dict[str, Path]
) -> None:
    hook = {"path": "lib/.git/hooks/pre-commit", "content": "#!/bin/sh\ncurl evil\n"}
    module_api.enqueue(reply(tool_use("write", hook)), reply(text("ok")))
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "add a hook"))
    # "edit": "allow" does not cover it: the protected path asks, and the user says no.
    request = await editor.wait_event(session, "permission-request")
    assert "lib/.git/hooks/pre-commit" in json.dumps(request)
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "reject"},
    )
    await turn
    assert not (folders["lib"] / ".git" / "hooks" / "pre-commit").exists()


async def test_a_folder_added_later_is_inside(
    editor: Editor, module_api: MessagesAPIServer, folders: dict[str, Path]
) -> None:
    editor.notify(
        types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS,
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[folder(folders["extra"], "extra")], removed=[]
            )
        ),
    )
    module_api.enqueue(reply(tool_use("read", {"path": "extra/notes.txt"})), reply(text("ok")))
    session = await editor.new_session()
    await editor.prompt(session, "read the notes")
    (result,) = tool_results(module_api)
    assert "extra notes" in result_text(result)
    assert editor.session_events(session, "permission-request") == []


async def test_a_link_in_the_second_folder_to_a_file_outside_is_not_attached(
    editor: Editor, module_api: MessagesAPIServer, folders: dict[str, Path]
) -> None:
    link = folders["lib"] / "notes.md"
    link.symlink_to(folders["away"] / "secret.txt")
    session = await editor.new_session()
    before = len(module_api.requests)
    args = {
        "uri": str(from_fs_path(str(link))),
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
        "instruction": "Explain the selected code.",
        "sessionId": session,
    }
    await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.runOnSelection", arguments=[args])
    )
    error = await editor.wait_event(session, "error")
    assert "notes.md is a link to" in error["message"]
    assert "outside the workspace" in error["message"]
    assert len(module_api.requests) == before


async def test_a_code_block_is_applied_to_a_file_of_the_second_folder(
    editor: Editor, folders: dict[str, Path]
) -> None:
    session = await editor.new_session()
    params = {"sessionId": session, "path": "lib/applied.py", "text": "APPLIED = True\n"}
    answer = asyncio.ensure_future(editor.request("agent/proposeEdit", params))
    request = await editor.wait_event(session, "permission-request")
    assert request["title"] == "Create lib/applied.py"
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "once"},
    )
    await answer
    assert (folders["lib"] / "applied.py").read_text() == "APPLIED = True\n"
    hook = {"sessionId": session, "path": "lib/.git/hooks/post-merge", "text": "evil\n"}
    with pytest.raises(JsonRpcException) as caught:
        await editor.request("agent/proposeEdit", hook)
    assert "protected" in str(caught.value)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def trusting(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A trusted window of two folders, the second with its own .agentls/config.json."""
    base = module_root / "trusting"
    first, second = base / "site", base / "tools"
    for folder_path in (first, second):
        folder_path.mkdir(parents=True)
        (folder_path / "x.py").write_text("X = 1\n")
    (second / ".agentls").mkdir()
    (second / ".agentls" / "config.json").write_text(json.dumps({"permissions": {"edit": "allow"}}))
    client = make_client()
    await client.start_io(
        sys.executable, "-m", "agentls.cli.main", "serve", env=server_env(module_api, base)
    )
    ed = Editor(client=client, root=first, profile=Profile())
    ed.auto_approve = False
    ed.apply_configs = True
    ed.install_handlers()
    # No permissions from the editor: they would replace each folder's config's (a later layer).
    options = {k: v for k, v in OPTIONS.items() if k != "permissions"}
    options["workspaceTrusted"] = True
    await client.initialize_session(
        types.InitializeParams(
            capabilities=ed.profile.capabilities(),
            root_uri=from_fs_path(str(first)),
            workspace_folders=[folder(first, "site"), folder(second, "tools")],
            initialization_options={"agent": options},
        )
    )
    yield ed
    await stop_editor(ed)


async def test_the_second_folders_config_is_asked_about_and_rules_its_paths(
    trusting: Editor, module_api: MessagesAPIServer
) -> None:
    editor = trusting
    await editor.wait_applied()
    [question] = editor.config_questions
    assert question["file"].endswith("tools/.agentls/config.json")
    module_api.enqueue(
        reply(tool_use("read", {"path": "tools/x.py"}), tool_use("read", {"path": "site/x.py"})),
        reply(tool_use("edit", {"path": "tools/x.py", "old_string": "1", "new_string": "2"})),
        reply(tool_use("edit", {"path": "site/x.py", "old_string": "1", "new_string": "2"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "change both"))
    # Its "edit": "allow" counts in its folder only: the first folder's edit still asks.
    request = await editor.wait_event(session, "permission-request")
    assert "site/x.py" in json.dumps(request)
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "reject"},
    )
    await turn
    assert (editor.root.parent / "tools" / "x.py").read_text() == "X = 2\n"
    assert (editor.root / "x.py").read_text() == "X = 1\n"
    assert len(editor.session_events(session, "permission-request")) == 1
