"""agent/listCommands says the agent type a command's front matter names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from messages_api import MessagesAPIServer
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    user = tmp_path / "data" / "config" / "agentls" / "commands"
    user.mkdir(parents=True)
    (user / "audit.md").write_text("---\nagent: auditor\n---\nAudit $ARGUMENTS")
    (user / "plain.md").write_text("Plain")
    started = await start_editor(tmp_path, api, Profile(), {})
    yield started
    await stop_editor(started)


async def test_list_commands_names_the_agent(editor: Editor) -> None:
    listed = await editor.request("agent/listCommands", {})
    agents = {c["name"]: c.get("agent") for c in listed["commands"]}
    assert agents["audit"] == "auditor"
    assert agents["plain"] is None and agents["clear"] is None
