"""Checkpoints and rewind over LSP (agent/revert scopes, agent/unrevert), with a client that
declares what our VS Code extension declares: the files go back through workspace/applyEdit, a
file the user changed since is a conflict, a checkpoint older than a compaction still works."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agentls.store import Store
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import server_env, start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def messages(editor: Editor, session: str) -> list[dict[str, Any]]:
    result = await editor.request("agent/getMessages", {"sessionId": session})
    return list(result["messages"])


async def user_ids(editor: Editor, session: str) -> list[str]:
    return [m["id"] for m in await messages(editor, session) if m["role"] == "user"]


async def revert(editor: Editor, session: str, message_id: str, **extra: Any) -> dict[str, Any]:
    params = {"sessionId": session, "messageId": message_id, **extra}
    return dict(await editor.request("agent/revert", params))


async def unrevert(editor: Editor, session: str) -> dict[str, Any]:
    return dict(await editor.request("agent/unrevert", {"sessionId": session}))


async def expect_invalid(editor: Editor, method: str, params: Any, *words: str) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await editor.request(method, params)
    assert caught.value.code == -32602, caught.value
    for word in words:
        assert word in caught.value.message, caught.value.message


def sent_text(api: MessagesAPIServer) -> str:
    return json.dumps(api.requests[-1].body["messages"])


async def test_each_scope_reverts_and_unrevert_redoes_it(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor, api = vscode_like, module_api
    (editor.root / "scope.py").write_text("v = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "scope.py"})),
        reply(tool_use("edit", {"path": "scope.py", "old_string": "v = 1", "new_string": "v = 2"})),
        reply(tool_use("write", {"path": "made.py", "content": "made = True\n"})),
        reply(tool_use("bash", {"command": "echo ran > ran.txt"})),
        reply(text("first done")),
        reply(tool_use("edit", {"path": "scope.py", "old_string": "v = 2", "new_string": "v = 3"})),
        reply(text("second done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "first change")
    await editor.prompt(session, "second change")
    first, second = await user_ids(editor, session)
    scope, made = editor.root / "scope.py", editor.root / "made.py"
    assert scope.read_text() == "v = 3\n" and made.exists()

    # A dry run says what "both" would do, and does nothing.
    preview = await revert(editor, session, first, dryRun=True)
    assert sorted(preview["files"]) == sorted([editor.uri("scope.py"), editor.uri("made.py")])
    assert preview["bashCommands"] == ["echo ran > ran.txt"] and preview["bashNotUndone"]
    assert preview["prompt"] == "first change"
    assert scope.read_text() == "v = 3\n" and made.exists()
    assert not any(m.get("reverted") for m in await messages(editor, session))
    await expect_invalid(editor, "agent/unrevert", {"sessionId": session}, "nothing to redo")

    # "code": the files as they were before the first message, in one workspace edit.
    edits = len(editor.applied_edits)
    code = await revert(editor, session, first, scope="code")
    assert sorted(code["files"]) == sorted([editor.uri("scope.py"), editor.uri("made.py")])
    assert code["bashCommands"] == ["echo ran > ran.txt"] and code.get("prompt") is None
    assert scope.read_text() == "v = 1\n" and not made.exists()
    assert (editor.root / "ran.txt").exists()  # bash effects stay
    assert len(editor.applied_edits) == edits + 1
    kinds = [c.get("kind", "edit") for c in editor.applied_edits[-1]["documentChanges"]]
    assert sorted(kinds) == ["delete", "edit"]
    assert not any(m.get("reverted") for m in await messages(editor, session))
    redone = await unrevert(editor, session)
    assert sorted(redone["files"]) == sorted(code["files"]) and redone["messageIds"] == []
    assert scope.read_text() == "v = 3\n" and made.read_text() == "made = True\n"
    await expect_invalid(editor, "agent/unrevert", {"sessionId": session}, "nothing to redo")

    # "conversation": the second message on are reverted, the files stay.
    talk = await revert(editor, session, second, scope="conversation")
    assert talk["files"] == [] and talk["prompt"] == "second change"
    assert talk["bashCommands"] == [] and not talk.get("bashNotUndone")
    assert scope.read_text() == "v = 3\n"
    listed = await messages(editor, session)
    dropped = [m["id"] for m in listed if m.get("reverted")]
    assert dropped == [m["id"] for m in listed[[m["id"] for m in listed].index(second) :]]
    redone = await unrevert(editor, session)
    assert redone["files"] == [] and redone["messageIds"] == dropped
    assert not any(m.get("reverted") for m in await messages(editor, session))

    # "both" (the default), then a prompt: the model sees only what is left, and the revert
    # can no longer be redone.
    both = await revert(editor, session, second)
    assert both["files"] == [editor.uri("scope.py")] and both["prompt"] == "second change"
    assert scope.read_text() == "v = 2\n"
    api.enqueue(reply(text("third done")))
    await editor.prompt(session, "third change")
    sent = sent_text(api)
    assert "first change" in sent and "third change" in sent
    assert "second change" not in sent and "second done" not in sent
    await expect_invalid(editor, "agent/unrevert", {"sessionId": session}, "nothing to redo")


async def test_a_file_the_user_changed_is_a_conflict_left_alone(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor, api = vscode_like, module_api
    for name in ("mine.py", "theirs.py", "undone.py"):
        (editor.root / name).write_text(f"{name[:-3]} = 1\n")
    api.enqueue(
        *(
            reply(tool_use("read", {"path": name}))
            for name in ("mine.py", "theirs.py", "undone.py")
        ),
        *(
            reply(
                tool_use(
                    "edit",
                    {"path": name, "old_string": f"{name[:-3]} = 1", "new_string": "changed = 2"},
                )
            )
            for name in ("mine.py", "theirs.py", "undone.py")
        ),
        reply(text("edited")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "edit three files")
    [checkpoint] = await user_ids(editor, session)
    # The user changes one buffer after the agent's edit, and puts another back by hand (the
    # didChange notifications are handled before the next request).
    editor.type_text("mine.py", "changed = 2\nmine = 3\n")
    editor.type_text("undone.py", "undone = 1\n")
    result = await revert(editor, session, checkpoint, scope="code")
    assert result["files"] == [editor.uri("theirs.py")]
    assert result["conflicts"] == [
        {
            "path": editor.uri("mine.py"),
            "before": "mine = 1\n",
            "agent": "changed = 2\n",
            "current": "changed = 2\nmine = 3\n",
        }
    ]
    assert editor.buffers[editor.uri("mine.py")].text == "changed = 2\nmine = 3\n"
    assert editor.buffers[editor.uri("theirs.py")].text == "theirs = 1\n"
    assert (editor.root / "theirs.py").read_text() == "theirs = 1\n"
    # The redo has the same rule: a file changed since the revert is left alone.
    editor.type_text("theirs.py", "theirs = 'mine now'\n")
    result = await unrevert(editor, session)
    assert result["files"] == []
    assert result["conflicts"] == [
        {
            "path": editor.uri("theirs.py"),
            "before": "theirs = 1\n",
            "agent": "changed = 2\n",
            "current": "theirs = 'mine now'\n",
        }
    ]
    assert editor.buffers[editor.uri("theirs.py")].text == "theirs = 'mine now'\n"


async def test_a_file_the_user_changed_elsewhere_is_restored_with_their_lines_kept(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor, api = vscode_like, module_api
    before = "top = 1\n\n\n\nbottom = 1\n"
    (editor.root / "both.py").write_text(before)
    api.enqueue(
        reply(tool_use("read", {"path": "both.py"})),
        reply(
            tool_use("edit", {"path": "both.py", "old_string": "top = 1", "new_string": "top = 2"})
        ),
        reply(text("edited")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "edit the top")
    [checkpoint] = await user_ids(editor, session)
    # The user changes the bottom line after the agent's edit of the top one.
    editor.type_text("both.py", "top = 2\n\n\n\nbottom = 'mine'\n")

    result = await revert(editor, session, checkpoint, scope="code")
    assert result["files"] == [editor.uri("both.py")] and result.get("conflicts", []) == []
    assert editor.buffers[editor.uri("both.py")].text == "top = 1\n\n\n\nbottom = 'mine'\n"
    # The redo merges the same way: the agent's line back, the user's kept.
    result = await unrevert(editor, session)
    assert result["files"] == [editor.uri("both.py")]
    assert editor.buffers[editor.uri("both.py")].text == "top = 2\n\n\n\nbottom = 'mine'\n"


async def test_revert_to_a_checkpoint_older_than_the_compaction(
    vscode_like: Editor, module_api: MessagesAPIServer, module_root: Path
) -> None:
    editor, api = vscode_like, module_api
    (editor.root / "old.py").write_text("old = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "old.py"})),
        reply(
            tool_use("edit", {"path": "old.py", "old_string": "old = 1", "new_string": "old = 2"})
        ),
        reply(text("one done")),
        reply(tool_use("edit", {"path": "old.py", "old_string": "old = 2", "new_string": "x = 3"})),
        reply(text("two done")),
        reply(text("SUMMARY: old.py was changed twice.")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "step one")
    await editor.prompt(session, "step two")
    compacted = await editor.prompt(session, "/compact")
    assert "Compacted" in compacted["text"]
    # The panel sees the session from the summary on; the older checkpoints are in the store.
    listed = await messages(editor, session)
    assert [p["type"] for p in listed[0]["parts"]] == ["summary"]
    assert "step two" not in json.dumps(listed)
    store = await Store.open(module_root / "data" / "agentls.db")
    try:
        two = [m.id for m in await store.load_messages(session) if m.text() == "step two"][0]
    finally:
        await store.close()

    result = await revert(editor, session, two)
    assert result["files"] == [editor.uri("old.py")] and result["prompt"] == "step two"
    assert (editor.root / "old.py").read_text() == "old = 2\n"
    # Redone, the session starts from the summary again; reverted again, from the beginning.
    await unrevert(editor, session)
    assert (editor.root / "old.py").read_text() == "x = 3\n"
    await revert(editor, session, two)
    api.enqueue(reply(text("carrying on")))
    answer = await editor.prompt(session, "step two, differently")
    assert answer["text"] == "carrying on"
    sent = api.requests[-1].body["messages"]
    dumped = json.dumps(sent)
    assert "step one" in dumped and "one done" in dumped and "step two, differently" in dumped
    assert "SUMMARY" not in dumped and "two done" not in dumped
    assert sent[0]["role"] == "user" and sent[-1]["role"] == "user"
    rejected = [r for r in api.all_requests if r.rejected]
    assert not rejected, rejected[0].error


async def test_a_rewind_from_the_terminal_is_seen_by_the_server_at_the_next_prompt(
    vscode_like: Editor, module_api: MessagesAPIServer, module_root: Path
) -> None:
    editor, api = vscode_like, module_api
    api.enqueue(reply(text("answer one")), reply(text("answer two")))
    session = await editor.new_session()
    await editor.prompt(session, "question one")
    await editor.prompt(session, "question two")  # the server holds the session loaded
    rewound = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "agentls.cli.main", "rewind", "--session", session, "--to", "2"],
        env=server_env(api, module_root / "data"),
        cwd=editor.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert rewound.returncode == 0, rewound.stderr
    assert "question two" in rewound.stdout
    api.enqueue(reply(text("answer three")))
    await editor.prompt(session, "question three")
    sent = sent_text(api)
    assert "question one" in sent and "question three" in sent
    assert "question two" not in sent and "answer two" not in sent
    reverted = [m for m in await messages(editor, session) if m.get("reverted")]
    assert len(reverted) == 2


async def test_bad_checkpoints_are_errors_naming_the_field(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor, api = vscode_like, module_api
    api.enqueue(reply(text("hello")))
    session = await editor.new_session()
    await editor.prompt(session, "hi")
    answer = [m["id"] for m in await messages(editor, session) if m["role"] == "assistant"][0]
    base = {"sessionId": session}
    await expect_invalid(
        editor, "agent/revert", {**base, "messageId": answer}, "messageId", "not a message"
    )
    await expect_invalid(editor, "agent/revert", {**base, "messageId": "msg_x"}, "messageId")
    await expect_invalid(
        editor, "agent/revert", {**base, "messageId": answer, "scope": "all"}, "scope"
    )
    await expect_invalid(editor, "agent/unrevert", {"sessionId": "ses_nope"}, "ses_nope")


async def test_a_client_without_document_changes_gets_the_deletes_on_disk(
    module_root: Path, module_api: MessagesAPIServer
) -> None:
    plain = Profile(document_changes=False, resource_operations=(), approvals=False)
    editor = await start_editor(
        module_root / "plain", module_api, plain, {"permissions": {"*": "allow"}}
    )
    try:
        (editor.root / "kept.py").write_text("k = 1\n")
        module_api.enqueue(
            reply(tool_use("read", {"path": "kept.py"})),
            reply(
                tool_use("edit", {"path": "kept.py", "old_string": "k = 1", "new_string": "k = 2"})
            ),
            reply(tool_use("write", {"path": "brand_new.py", "content": "new = 1\n"})),
            reply(text("done")),
        )
        session = await editor.new_session()
        await editor.prompt(session, "change and create")
        [checkpoint] = await user_ids(editor, session)
        edits = len(editor.applied_edits)
        result = await revert(editor, session, checkpoint)
        assert sorted(result["files"]) == sorted(
            [editor.uri("kept.py"), editor.uri("brand_new.py")]
        )
        # One edit, the changes map of kept.py; the new file deleted on disk.
        assert len(editor.applied_edits) == edits + 1
        assert list(editor.applied_edits[-1]["changes"]) == [editor.uri("kept.py")]
        assert "documentChanges" not in editor.applied_edits[-1]
        assert editor.buffers[editor.uri("kept.py")].text == "k = 1\n"
        assert not (editor.root / "brand_new.py").exists()
        await unrevert(editor, session)
        assert (editor.root / "brand_new.py").read_text() == "new = 1\n"
        assert editor.buffers[editor.uri("kept.py")].text == "k = 2\n"
    finally:
        await stop_editor(editor)
