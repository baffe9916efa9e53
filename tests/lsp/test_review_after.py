"""Review "after" over LSP: an edit the rules would ask about is applied at once and kept pending
(the review event, agent/listReview); agent/review keeps a hunk or undoes a file through a
workspace edit; an undo after the user's own edit is a conflict and writes nothing; deny rules,
protected paths and bash are unchanged; an untrusted workspace cannot turn it on."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

pytestmark = pytest.mark.asyncio(loop_scope="module")

BEFORE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
AFTER = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"


def rules(outside: Path) -> dict[str, Any]:
    # A folder outside the workspace the rules open, asking.
    return {"write": {"locked/*": "deny", f"{outside}/**": "ask"}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(
        module_root / "after",
        module_api,
        Profile(),
        {"review": "after", "permissions": rules(module_root / "outside")},
    )
    yield editor
    await stop_editor(editor)


async def review(editor: Editor, session: str, path: Path, action: str, **more: Any) -> Any:
    params = {"sessionId": session, "path": str(path), "action": action, **more}
    return await editor.request("agent/review", params)


async def test_an_edit_that_would_ask_is_applied_at_once_and_kept_or_undone(
    editor: Editor, module_api: MessagesAPIServer
) -> None:
    path = editor.root / "calc.py"
    path.write_text(BEFORE)
    module_api.enqueue(
        reply(tool_use("read", {"path": "calc.py"})),
        reply(tool_use("write", {"path": "calc.py", "content": AFTER})),
        reply(text("done")),
    )
    session = await editor.new_session()
    result = await editor.prompt(session, "change a and e")
    assert result["finishReason"] == "end_turn"
    # No question: the write landed, and it is pending review with its two hunks.
    assert editor.session_events(session, "permission-request") == []
    assert path.read_text() == AFTER
    event = await editor.wait_event(session, "review")
    [pending] = event["files"]
    assert pending["path"] == str(path)
    assert (pending["base"], pending["agent"]) == (BEFORE, AFTER)
    assert [h["oldStart"] for h in pending["hunks"]] == [0, 4]
    assert pending["hunks"][1]["diff"] == "@@ -5 +5 @@\n-e = 5\n+e = 50\n"
    listed = await editor.request("agent/listReview", {"sessionId": session})
    assert listed["files"] == event["files"]

    # Keep the first hunk: the base takes it, the second stays pending; nothing is written.
    edits = len(editor.applied_edits)
    kept = await review(editor, session, path, "keep", hunks=[0])
    [rest] = kept["files"]
    assert rest["base"] == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"
    assert [h["diff"] for h in rest["hunks"]] == ["@@ -5 +5 @@\n-e = 5\n+e = 50\n"]
    assert len(editor.applied_edits) == edits and path.read_text() == AFTER
    assert (await editor.wait_event(session, "review", count=2))["files"] == kept["files"]

    # Undo the file (by its workspace-relative path): one workspace edit puts the kept text back.
    undone = await review(editor, session, Path("calc.py"), "undo")
    assert undone == {"files": []}
    assert len(editor.applied_edits) == edits + 1
    assert path.read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"
    assert (await editor.wait_event(session, "review", count=3))["files"] == []
    assert (await editor.request("agent/listReview", {"sessionId": session}))["files"] == []

    # The model is not left assuming its text landed: it must read the file again first.
    module_api.enqueue(
        reply(tool_use("edit", {"path": "calc.py", "old_string": "e = 50", "new_string": "e=6"})),
        reply(text("ok")),
    )
    await editor.prompt(session, "again")
    [refused] = [e for e in editor.session_events(session, "tool-result") if e["tool"] == "edit"]
    assert refused["isError"] and "not read calc.py" in refused["output"]

    # Nothing left to review: an invalid params error that names the path.
    with pytest.raises(JsonRpcException, match="path: .*calc.py has no change pending"):
        await review(editor, session, path, "keep")


async def test_undo_after_the_user_edited_the_file_is_a_conflict(
    editor: Editor, module_api: MessagesAPIServer
) -> None:
    path = editor.root / "notes.md"
    module_api.enqueue(
        reply(tool_use("write", {"path": "notes.md", "content": "agent\n"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "write notes")
    [pending] = (await editor.wait_event(session, "review"))["files"]
    # A created file: no base (null fields are left out on the wire).
    assert "base" not in pending and pending["agent"] == "agent\n"

    # The user types into the file (unsaved): an undo must not overwrite that.
    editor.type_text("notes.md", "agent\nmine\n")
    edits = len(editor.applied_edits)
    answer = await review(editor, session, path, "undo")
    assert answer["conflict"] == {
        "path": str(path),
        "agent": "agent\n",
        "current": "agent\nmine\n",
    }
    assert answer["files"] == [pending]  # still pending
    assert len(editor.applied_edits) == edits and path.exists()
    assert editor.buffers[editor.uri("notes.md")].text == "agent\nmine\n"

    # Undoing a hunk that does not exist names it; keeping the whole file empties the review.
    with pytest.raises(JsonRpcException, match="hunks: .*has no hunk 3"):
        await review(editor, session, path, "undo", hunks=[3])
    assert (await review(editor, session, path, "keep"))["files"] == []


async def test_an_undone_new_file_is_deleted(editor: Editor, module_api: MessagesAPIServer) -> None:
    path = editor.root / "pkg" / "new.py"
    module_api.enqueue(
        reply(tool_use("write", {"path": "pkg/new.py", "content": "X = 1\n"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "add a module")
    await editor.wait_event(session, "review")
    assert path.read_text() == "X = 1\n"
    assert (await review(editor, session, path, "undo"))["files"] == []
    assert not path.exists()
    changes = editor.applied_edits[-1]["documentChanges"]
    assert [c.get("kind") for c in changes] == ["delete"]


async def test_deny_outside_protected_paths_and_bash_are_unchanged(
    editor: Editor, module_api: MessagesAPIServer, module_root: Path
) -> None:
    (editor.root / "locked").mkdir(exist_ok=True)
    outside = module_root / "outside"
    outside.mkdir(exist_ok=True)
    module_api.enqueue(
        reply(tool_use("write", {"path": "locked/x.txt", "content": "no\n"})),
        reply(tool_use("write", {"path": ".vscode/tasks.json", "content": "{}\n"})),
        reply(tool_use("write", {"path": str(outside / "o.txt"), "content": "o\n"})),
        reply(tool_use("bash", {"command": "touch ran.txt"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "try")
    results = {
        e["tool"] + str(i): e for i, e in enumerate(editor.session_events(session, "tool-result"))
    }
    denied = results["write0"]
    assert denied["isError"] and "Permission denied" in denied["output"]
    assert not (editor.root / "locked" / "x.txt").exists()
    # The protected file, the file outside and the bash call still asked (answered "once").
    asked = [e["title"] for e in editor.session_events(session, "permission-request")]
    assert asked == ["Create .vscode/tasks.json", f"Create {outside / 'o.txt'}", "touch ran.txt"]
    assert (editor.root / ".vscode" / "tasks.json").exists() and (outside / "o.txt").exists()
    # What was asked is not pending review.
    assert editor.session_events(session, "review") == []
    assert (await editor.request("agent/listReview", {"sessionId": session}))["files"] == []


async def test_review_after_from_an_untrusted_workspace_config_is_ignored(
    module_root: Path, module_api: MessagesAPIServer
) -> None:
    root = module_root / "untrusted"
    (root / "ws" / ".agentls").mkdir(parents=True)
    (root / "ws" / ".agentls" / "config.json").write_text(json.dumps({"review": "after"}))
    editor = await start_editor(root, module_api, Profile())
    try:
        module_api.enqueue(
            reply(tool_use("write", {"path": "a.txt", "content": "x\n"})),
            reply(text("done")),
        )
        session = await editor.new_session()
        await editor.prompt(session, "write")
        # The edit asked, as review "before" does, and nothing is pending.
        assert [e["tool"] for e in editor.session_events(session, "permission-request")] == [
            "write"
        ]
        assert editor.session_events(session, "review") == []
        assert (await editor.request("agent/listReview", {"sessionId": session}))["files"] == []
    finally:
        await stop_editor(editor)


async def test_plan_mode_still_refuses_the_write(
    editor: Editor, module_api: MessagesAPIServer
) -> None:
    module_api.enqueue(
        reply(tool_use("write", {"path": "plan.txt", "content": "x\n"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.request("agent/setMode", {"sessionId": session, "mode": "plan"})
    await editor.prompt(session, "write")
    [result] = editor.session_events(session, "tool-result")
    assert result["isError"] and not (editor.root / "plan.txt").exists()
    assert editor.session_events(session, "review") == []
