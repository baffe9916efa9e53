"""agent/mcpStatus over LSP: the servers the editor's settings name (initializationOptions.agent
.mcpServers), their state and tools, after they were started (the panel's list); bad params are
refused naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Profile
from tests.mcp.conftest import stdio_entry


async def test_mcp_status_lists_servers_state_and_tools(
    tmp_path: Path, api: MessagesAPIServer
) -> None:
    servers = {"test": stdio_entry(), "broken": stdio_entry(MCP_TEST_FAIL="1")}
    editor = await start_editor(tmp_path, api, Profile(), {"mcpServers": servers})
    try:
        before = await editor.request("agent/mcpStatus", {})
        assert [(s["name"], s["status"]) for s in before["servers"]] == [
            ("broken", "not started"),
            ("test", "not started"),
        ]
        after = await editor.request("agent/mcpStatus", {"start": True}, timeout=60)
        broken, test = after["servers"]
        assert broken["status"] == "failed" and "giving up" in broken["error"]
        assert test["status"] == "running" and test["transport"] == "stdio"
        echo = next(t for t in test["tools"] if t["remoteName"] == "echo")
        assert echo == {"name": "mcp__test__echo", "remoteName": "echo", "readOnlyHint": True}
        with pytest.raises(JsonRpcException, match="start"):
            await editor.request("agent/mcpStatus", {"start": "yes"})
    finally:
        await stop_editor(editor)
