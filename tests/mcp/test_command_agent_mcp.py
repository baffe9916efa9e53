"""A command run as an agent type that names an MCP tool gets it at the session's first turn
(the servers start before its first step) and no other of the session's tools."""

from __future__ import annotations

from pathlib import Path

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.mcp.conftest import stdio_entry


async def test_the_agent_types_mcp_tool_is_there_from_the_first_step(
    make_harness: HarnessFactory, api: MessagesAPIServer, _isolated_config_home: Path
) -> None:
    commands = _isolated_config_home / "commands"
    commands.mkdir(parents=True)
    (commands / "echo.md").write_text("---\nagent: echoer\n---\nEcho $ARGUMENTS")
    h = await make_harness(
        {
            "mcpServers": {"test": stdio_entry()},
            "agents": {"echoer": {"tools": ["read", "mcp__test__echo"]}},
            "permissions": {"*": "allow"},
        }
    )
    api.enqueue(reply(tool_use("mcp__test__echo", {"text": "hi"})), reply(text("echoed")))
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "/echo hi")
    assert result.text == "echoed"
    first, second = h.accepted_requests()
    assert [t["name"] for t in first["tools"]] == ["read", "mcp__test__echo"]
    [echoed] = [b for b in second["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert not echoed.get("is_error") and "hi" in str(echoed["content"])
