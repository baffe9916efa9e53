"""agent/listSkills: the user's skills, a workspace's own once the editor trusts it, the files
that could not be used, and whether trust would add some."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from messages_api import MessagesAPIServer
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

FIXTURES = Path(__file__).parent.parent / "fixtures" / "skills"


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    # tests/conftest.py points $CLAUDE_CONFIG_DIR here: the user's ~/.claude.
    shutil.copytree(FIXTURES / "home" / ".claude", tmp_path / "claude-home")
    shutil.copytree(FIXTURES / "workspace", tmp_path / "ws")
    started = await start_editor(tmp_path, api, Profile(), {"workspaceTrusted": False})
    yield started
    await stop_editor(started)


async def test_the_users_skills_then_the_workspaces_once_trusted(editor: Editor) -> None:
    listed = await editor.request("agent/listSkills", {})
    assert [(s["name"], s["source"]) for s in listed["skills"]] == [("release-notes", "user")]
    notes = listed["skills"][0]
    assert notes["allowedTools"] == ["Bash(python3:*)", "Read"]
    assert notes["path"].endswith("claude-home/skills/release-notes/SKILL.md")
    assert listed["untrustedWorkspaceSkills"] is True and listed["problems"] == []
    editor.client.protocol.notify("agent/workspaceTrust", {"trusted": True})
    for _ in range(100):  # the notification is handled before the next request
        listed = await editor.request("agent/listSkills", {})
        if len(listed["skills"]) > 1:
            break
    assert [s["name"] for s in listed["skills"]] == ["api-style", "release-notes"]
    assert listed["untrustedWorkspaceSkills"] is False
    assert len(listed["problems"]) == 1 and "broken/SKILL.md" in listed["problems"][0]
