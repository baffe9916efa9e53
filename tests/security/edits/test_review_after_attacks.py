"""Review "after" asked to apply what must still ask (protected and outside paths however named, a
deny rule through a link, a secret, plan mode, a sub-agent, ACP, an untrusted config), and
agent/review on what is not the session's pending change. Real `agentls serve` processes over
stdio, ACP through its SDK; each attack is counted in the security table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from acp.schema import TextContentBlock
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.acp.conftest import AcpEnv, ScriptedClient, connect
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.lsp.test_language_requests import (
    RENAME_METHODS,
    answering_editor,
    stop_answering,
    text_edit,
    write_project,
)
from tests.security.conftest import SecurityFigures
from tests.security.edits.support import (
    PAYLOAD,
    REVIEW,
    REVIEW_ANSWER,
    refused,
    snapshot,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


# ---- review "after" -------------------------------------------------------------------------


async def test_review_after_still_asks_for_protected_and_outside_paths_however_named(
    after: Editor, api: MessagesAPIServer, root: Path, security_figures: SecurityFigures
) -> None:
    """Each write reaches a protected path or a place outside the workspace through a link, a
    case variant, a nested folder or a rename: it asks (the editor answers once) and nothing of
    it is pending review; the deny rule denies through a link too."""
    editor, ws = after, after.root
    outside = root / "outside"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "locked").mkdir()
    (ws / "gitlink").symlink_to(ws / ".git")
    (ws / "config.txt").symlink_to(ws / ".git" / "config")
    (ws / "outlink").symlink_to(outside)
    (ws / "alias").symlink_to(ws / "locked")
    writes = [
        ("gitlink/hooks/pre-commit", ".git/hooks/pre-commit"),  # a linked protected folder
        (".GIT/hooks/post-checkout", ".GIT/hooks/post-checkout"),  # another case
        ("src/.vscode/settings.json", "src/.vscode/settings.json"),  # nested
        ("deep/er/.envrc", "deep/er/.envrc"),
        ("sub/.agentls/config.json", "sub/.agentls/config.json"),
        (".gitattributes", ".gitattributes"),
        ("outlink/o.txt", str(outside / "o.txt")),  # a link out of the workspace
        (str(outside / "p.txt"), str(outside / "p.txt")),
        ("sub/../../../outside/q.txt", str(outside / "q.txt")),
    ]
    session = await editor.new_session()
    for path, shown in writes:
        with security_figures.attempt(REVIEW):
            count = len(editor.session_events(session, "permission-request"))
            api.enqueue(
                reply(tool_use("write", {"path": path, "content": "#!/bin/sh\nid\n"})),
                reply(text("ok")),
            )
            await editor.prompt(session, "write")
            asked = editor.session_events(session, "permission-request")[count:]
            assert [e["title"] for e in asked] == [f"Create {shown}"], (path, asked)
            assert (await editor.request("agent/listReview", {"sessionId": session}))["files"] == []
    # A link to a protected file the model has read.
    with security_figures.attempt(REVIEW):
        count = len(editor.session_events(session, "permission-request"))
        api.enqueue(
            reply(tool_use("read", {"path": "config.txt"})),
            reply(
                tool_use("write", {"path": "config.txt", "content": "[core]\n\tfsmonitor = id\n"})
            ),
            reply(text("ok")),
        )
        await editor.prompt(session, "write")
        asked = editor.session_events(session, "permission-request")[count:]
        assert [e["title"] for e in asked] == ["Overwrite .git/config"], asked
        assert (await editor.request("agent/listReview", {"sessionId": session}))["files"] == []
    with security_figures.attempt(REVIEW):
        api.enqueue(
            reply(tool_use("write", {"path": "alias/x.txt", "content": "no\n"})), reply(text("ok"))
        )
        count = len(editor.session_events(session, "permission-request"))
        await editor.prompt(session, "write")
        result = editor.session_events(session, "tool-result")[-1]
        assert result["isError"] and "Permission denied" in result["output"], result
        assert not (ws / "locked" / "x.txt").exists()
        assert len(editor.session_events(session, "permission-request")) == count


async def test_review_after_does_not_show_the_model_a_secret(
    after: Editor, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    """Overwriting or editing a secret file needs it read first, and that read still asks: the
    model never gets its text through a write applied at once."""
    editor = after
    secret = "API_KEY=sk-live-R7-SECRET\n"
    (editor.root / ".env").write_text(secret)
    session = await editor.new_session()
    editor.auto_approve = False
    try:
        for call in (
            tool_use("write", {"path": ".env", "content": "API_KEY=x\n"}),
            tool_use("edit", {"path": ".env", "old_string": "API_KEY=", "new_string": "K="}),
        ):
            with security_figures.attempt(REVIEW):
                api.enqueue(reply(call), reply(text("ok")))
                await editor.prompt(session, "change it")
                result = editor.session_events(session, "tool-result")[-1]
                assert result["isError"] and "read" in result["output"], result
                assert (editor.root / ".env").read_text() == secret
                assert "sk-live-R7-SECRET" not in json.dumps(api.requests[-1].body)
    finally:
        editor.auto_approve = True


async def test_agent_review_acts_only_on_the_sessions_pending_file(
    after: Editor, api: MessagesAPIServer, root: Path, security_figures: SecurityFigures
) -> None:
    editor, ws = after, after.root
    outside = root / "outside"
    (outside / "bashrc").write_text(PAYLOAD)
    (ws / "mine.txt").write_text("mine\n")
    api.enqueue(
        reply(tool_use("read", {"path": "mine.txt"})),
        reply(tool_use("write", {"path": "mine.txt", "content": "agent\n"})),
        reply(text("ok")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "write")
    [pending] = (await editor.request("agent/listReview", {"sessionId": session}))["files"]
    assert pending["path"] == str(ws / "mine.txt")
    other = await editor.new_session()
    (ws / "untouched.txt").write_text("u\n")
    (ws / "to-outside.txt").symlink_to(outside / "bashrc")
    attempts = [
        {"sessionId": other, "path": "mine.txt", "action": "undo"},  # another session's file
        {"sessionId": session, "path": "untouched.txt", "action": "undo"},  # not pending
        {"sessionId": session, "path": "../outside/bashrc", "action": "undo"},
        {"sessionId": session, "path": str(outside / "bashrc"), "action": "undo"},
        {"sessionId": session, "path": "~/.bashrc", "action": "undo"},
        {"sessionId": session, "path": "to-outside.txt", "action": "undo"},
        {"sessionId": session, "path": "mine.txt", "action": "undo", "hunks": [-1]},
        {"sessionId": session, "path": "mine.txt", "action": "undo", "hunks": [5]},
        {"sessionId": session, "path": "mine.txt", "action": "delete"},
        {"sessionId": "ses_nope", "path": "mine.txt", "action": "undo"},
        {"sessionId": session, "path": "mine.txt\0../outside/bashrc", "action": "undo"},
        {"sessionId": session, "path": (outside / "bashrc").as_uri(), "action": "undo"},
        {"sessionId": session, "path": "file://otherhost" + str(ws / "mine.txt"), "action": "undo"},
        {"sessionId": session, "path": editor.uri("sub/../../../outside/bashrc"), "action": "undo"},
    ]
    before = snapshot(ws), snapshot(outside)
    for params in attempts:
        with security_figures.attempt(REVIEW_ANSWER):
            await refused(editor, "agent/review", params)
            assert (snapshot(ws), snapshot(outside)) == before
            listed = await editor.request("agent/listReview", {"sessionId": session})
            assert listed["files"] == [pending]

    # The file is now a link out of the workspace: its pending change cannot be undone through
    # it (the path names another file now), and nothing outside is written.
    (ws / "mine.txt").unlink()
    (ws / "mine.txt").symlink_to(outside / "bashrc")
    (outside / "bashrc").write_text("agent\n")  # even with the agent's text there
    for params in (
        {"sessionId": session, "path": "mine.txt", "action": "undo"},
        {"sessionId": session, "path": str(ws / "mine.txt"), "action": "undo"},
    ):
        with security_figures.attempt(REVIEW_ANSWER):
            try:
                answer = await editor.request("agent/review", params)
            except JsonRpcException:
                answer = None
            assert answer is None or answer.get("conflict"), answer
            assert (outside / "bashrc").read_text() == "agent\n"
            assert (ws / "mine.txt").is_symlink()

    # A directory where the created file was: a conflict, nothing removed.
    api.enqueue(
        reply(tool_use("write", {"path": "made/x.txt", "content": "x\n"})), reply(text("ok"))
    )
    await editor.prompt(session, "write")
    (ws / "made" / "x.txt").unlink()
    (ws / "made" / "x.txt").mkdir()
    (ws / "made" / "x.txt" / "keep.txt").write_text("keep\n")
    with security_figures.attempt(REVIEW_ANSWER):
        answer = await editor.request(
            "agent/review", {"sessionId": session, "path": "made/x.txt", "action": "undo"}
        )
        assert answer.get("conflict"), answer
        assert (ws / "made" / "x.txt" / "keep.txt").read_text() == "keep\n"

    # The user types into it and does not save: a conflict, the buffer kept.
    api.enqueue(
        reply(tool_use("write", {"path": "typed.txt", "content": "agent\n"})), reply(text("ok"))
    )
    await editor.prompt(session, "write")
    editor.open("typed.txt")
    editor.type_text("typed.txt", "agent\nmine\n")
    with security_figures.attempt(REVIEW_ANSWER):
        params = {"sessionId": session, "path": "typed.txt", "action": "undo"}
        answer = await editor.request("agent/review", params)
        assert answer["conflict"]["current"] == "agent\nmine\n", answer
        assert editor.buffers[editor.uri("typed.txt")].text == "agent\nmine\n"
        assert (ws / "typed.txt").read_text() == "agent\n"

    # The user saved their own text meanwhile: a conflict, never overwritten.
    api.enqueue(
        reply(tool_use("write", {"path": "saved.txt", "content": "agent\n"})), reply(text("ok"))
    )
    await editor.prompt(session, "write")
    editor.type_text("saved.txt", "user\n")  # the user's text, saved
    editor.save(editor.uri("saved.txt"))
    with security_figures.attempt(REVIEW_ANSWER):
        answer = await editor.request(
            "agent/review",
            {"sessionId": session, "path": "saved.txt", "action": "undo", "hunks": [0]},
        )
        assert answer["conflict"]["current"] == "user\n", answer
        assert (ws / "saved.txt").read_text() == "user\n"


# ---- review "after" through a sub-agent and through ACP ----------------------------------------


async def test_a_sub_agents_edit_still_asks_under_review_after(
    root: Path, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    """The user's `agents` gives a sub-agent write. Its session's pending review is shown nowhere
    (the panel lists the session the user prompts), so its edits ask as before."""
    writer = {"description": "writes", "prompt": "You write.", "tools": ["read", "write"]}
    editor = await start_editor(
        root / "sub", api, Profile(), {"review": "after", "agents": {"writer": writer}}
    )
    try:
        (editor.root / "notes.txt").write_text("old\n")
        task = {"description": "note", "prompt": "Rewrite notes.txt", "agent": "writer"}
        api.enqueue(
            reply(tool_use("task", task)),
            reply(tool_use("read", {"path": "notes.txt"})),
            reply(tool_use("write", {"path": "notes.txt", "content": PAYLOAD})),
            reply(tool_use("write", {"path": "made.txt", "content": PAYLOAD})),
            reply(text("rewritten")),
            reply(text("done")),
        )
        session = await editor.new_session()
        with security_figures.attempt(REVIEW):
            await editor.prompt(session, "have notes rewritten")
            asked = [e["title"] for e in editor.events if e["type"] == "permission-request"]
            assert asked == ["Overwrite notes.txt", "Create made.txt"], asked
    finally:
        await stop_editor(editor)


async def test_review_after_from_the_users_config_still_asks_over_acp(
    tmp_path: Path, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    """ACP has no agent/listReview nor agent/review: an edit applied at once there could never
    be reviewed, so the user's `review: "after"` does not apply to it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "test-key",
        "AGENTLS_DATA_DIR": str(tmp_path / "data"),
        "AGENTLS_MODEL": "claude-sonnet-5-5",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    config = tmp_path / "config" / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"review": "after"}))
    client = ScriptedClient(files={})
    async with connect(AcpEnv(api, env, ws.resolve(), tmp_path), client) as acp:
        api.enqueue(
            reply(tool_use("write", {"path": "acp.txt", "content": PAYLOAD})), reply(text("ok"))
        )
        sid = (await acp.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        with security_figures.attempt(REVIEW):
            await asyncio.wait_for(
                acp.conn.prompt(
                    session_id=sid, prompt=[TextContentBlock(type="text", text="write")]
                ),
                60,
            )
            assert [q.kind for q, _ in client.questions] == ["edit"], client.questions
            assert client.writes == [] and not (ws / "acp.txt").exists()


async def test_plan_mode_and_a_rename_into_a_protected_folder_are_unchanged_by_review_after(
    root: Path, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    """A language server's rename that also edits .vscode/helper.py asks; in plan mode the
    write and the rename are refused before any question, pending nothing."""
    editor, answers = await answering_editor(
        root / "after-rename", api, RENAME_METHODS, {"review": "after"}
    )
    try:
        where = write_project(editor.root, "ren")
        (editor.root / ".vscode").mkdir()
        helper = editor.root / ".vscode" / "helper.py"
        helper.write_text("from ren.util import add\n")
        answers.answers["textDocument/prepareRename"] = lambda params: {
            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 7}},
            "placeholder": "add",
        }
        answers.answers["textDocument/rename"] = lambda params: {
            "changes": {
                editor.uri("ren/util.py"): [text_edit(0, 4, 7, params["newName"])],
                editor.uri(".vscode/helper.py"): [text_edit(0, 21, 24, params["newName"])],
            }
        }
        api.enqueue(
            reply(tool_use("read", {"path": "ren/util.py"})),
            reply(tool_use("read", {"path": ".vscode/helper.py"})),
            reply(tool_use("rename", {"path": "ren/util.py", "symbol": "add", "new_name": "plus"})),
            reply(text("done")),
        )
        session = await editor.new_session()
        with security_figures.attempt(REVIEW):
            await editor.prompt(session, "rename")
            asked = editor.session_events(session, "permission-request")
            results = editor.session_events(session, "tool-result")
            assert [e["tool"] for e in asked] == ["rename"], (asked, results[-1])
            assert (await editor.request("agent/listReview", {"sessionId": session}))["files"] == []
        assert "plus" in helper.read_text()  # answered once by the editor
        await editor.request("agent/setMode", {"sessionId": session, "mode": "plan"})
        before = snapshot(editor.root)
        for call in (
            tool_use("write", {"path": "plan.txt", "content": PAYLOAD}),
            tool_use("edit", {"path": "ren/util.py", "old_string": "plus", "new_string": "x"}),
            tool_use("rename", {"path": "ren/util.py", "symbol": "plus", "new_name": "y"}),
        ):
            with security_figures.attempt(REVIEW):
                count = len(editor.session_events(session, "permission-request"))
                api.enqueue(reply(call), reply(text("ok")))
                await editor.prompt(session, "try")
                result = editor.session_events(session, "tool-result")[-1]
                assert result["isError"], result
                assert snapshot(editor.root) == before
                assert len(editor.session_events(session, "permission-request")) == count
        assert where.is_dir()
    finally:
        await stop_answering(editor, answers)


@pytest.mark.parametrize(
    "layer",
    [
        {"review": "after"},
        {"review": "after", "permissions": {"write": "ask"}},
        {"Review": "after"},
        {"REVIEW": "after"},
        {"review": ["after"]},
    ],
)
async def test_an_untrusted_workspace_config_never_sets_review_after(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    security_figures: SecurityFigures,
    layer: dict[str, Any],
) -> None:
    from agentls.config import load_settings

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "ws" / ".agentls").mkdir(parents=True)
    (tmp_path / "ws" / ".agentls" / "config.json").write_text(json.dumps(layer))
    with security_figures.attempt(REVIEW):
        for editor in (False, True):
            settings = load_settings(tmp_path / "ws", editor=editor)
            assert settings.review == "before", layer
            assert settings.untrusted_notice, layer
