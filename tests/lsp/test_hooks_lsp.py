"""Hooks under `agentls serve`, from a home set up for Claude Code (tests/fixtures/hooks: its
~/.claude/settings.json and the shell scripts it names, jq reading their stdin, as users write
them): the PreToolUse hook refuses `rm`, the PostToolUse hook formats what the agent wrote, the
Stop hook sends the agent back to run the tests; the editor hears each run as an agent/event."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.waiting import until

HOME = Path(__file__).parent.parent / "fixtures" / "hooks" / "home" / ".claude"


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    # tests/conftest.py points $CLAUDE_CONFIG_DIR here: the user's ~/.claude.
    shutil.copytree(HOME, tmp_path / "claude-home")
    started = await start_editor(tmp_path, api, Profile(), {"permissions": {"*": "allow"}})
    yield started
    await stop_editor(started)


async def test_a_claude_code_home_s_hooks_block_format_and_demand_tests(
    editor: Editor, api: MessagesAPIServer
) -> None:
    (editor.root / "old.log").write_text("old\n")
    api.enqueue(
        reply(tool_use("bash", {"command": "rm old.log"})),
        reply(tool_use("write", {"path": "notes.md", "content": "# Notes   \nkept  \n"})),
        reply(text("Done.")),
        reply(tool_use("bash", {"command": "touch .tests-passed"})),
        reply(text("Tests pass; done.")),
    )
    session = await editor.new_session()
    result = await editor.prompt(session, "tidy up")
    assert result["text"] == "Tests pass; done.", result
    assert (editor.root / "old.log").read_text() == "old\n"  # rm refused
    assert (editor.root / "notes.md").read_text() == "# Notes\nkept\n"  # formatted after write
    runs = [
        (h["event"], h.get("tool"), h["outcome"]) for h in editor.session_events(session, "hook")
    ]
    assert runs == [
        ("PreToolUse", "Bash", "blocked"),
        ("PostToolUse", "Write", "ok"),
        ("Stop", None, "blocked"),
        ("PreToolUse", "Bash", "ok"),
        ("Stop", None, "ok"),
    ]
    blocked = next(h for h in editor.session_events(session, "hook") if h["outcome"] == "blocked")
    assert blocked["message"] == "rm is not allowed here: move files to trash/ instead"
    assert blocked["source"].endswith("claude-home/settings.json")
    told = "".join(str(r.body["messages"]) for r in api.requests)
    assert "rm is not allowed here" in told
    assert "[Stop hook] Run the tests (make test) before you stop." in told


async def test_the_editor_is_asked_about_a_trusted_workspace_s_hooks_before_they_run(
    tmp_path: Path, api: MessagesAPIServer
) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".claude").mkdir(parents=True)
    settings = workspace / ".claude" / "settings.json"
    hook = {"hooks": [{"type": "command", "command": "touch PROMPTED"}]}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [hook]}}))
    editor = await start_editor(
        tmp_path, api, Profile(), {"workspaceTrusted": True, "permissions": {"*": "allow"}}
    )
    try:
        # Asked before anything runs: the file, what it enables, the diff.
        await until(lambda: editor.config_questions, "the config question")
        [question] = editor.config_questions
        assert question["file"] == str(settings) and question["kind"] == "hooks"
        assert question["enables"] == ["hook UserPromptSubmit: touch PROMPTED"]
        assert "+" in question["diff"] and "touch PROMPTED" in question["diff"]
        session = await editor.new_session()
        api.enqueue(reply(text("Not yet.")))
        await editor.prompt(session, "hello")
        assert not (workspace / "PROMPTED").exists()  # not confirmed yet: ignored
        editor.apply_configs = True  # "Apply"
        await editor.wait_applied()
        api.enqueue(reply(text("Now.")))
        await editor.prompt(session, "hello again")
        assert (workspace / "PROMPTED").exists()
    finally:
        editor.released.set()
        await stop_editor(editor)
