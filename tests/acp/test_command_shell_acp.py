"""An ACP client sees a Claude Code command's `!` command as an execute tool call that asks
(its `allowed-tools` do not name it), and the model gets its output in the prompt (`agentls acp`,
the user's ~/.claude/commands, the local Messages API)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp.schema import TextContentBlock

from messages_api import reply, text
from tests.acp.conftest import TURN_S, AcpEnv, ScriptedClient, connect

pytestmark = pytest.mark.asyncio(loop_scope="module")

COMMAND = """---
description: Count the files
allowed-tools: Bash(git status:*)
---
Files here: !`ls | wc -l`

Say whether that is many.
"""


async def test_a_commands_bash_command_is_a_tool_call_that_asks_and_its_output_is_sent(
    acp_env: AcpEnv,
) -> None:
    commands = Path(acp_env.env["CLAUDE_CONFIG_DIR"]) / "commands"
    commands.mkdir(parents=True, exist_ok=True)
    (commands / "count.md").write_text(COMMAND)
    for name in ("a.txt", "b.txt", "c.txt"):
        (acp_env.root / name).write_text(name)
    client = ScriptedClient(answers=["allow_once"])
    acp_env.api.enqueue(reply(text("Three is few.")))
    async with connect(acp_env, client) as acp:
        sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
        words = [TextContentBlock(type="text", text="/count")]
        result = await asyncio.wait_for(acp.conn.prompt(session_id=sid, prompt=words), TURN_S)
    assert result.stop_reason == "end_turn"
    (start,) = client.of("tool_call", sid)
    assert start.kind == "execute" and "ls | wc -l" in start.content[0].content.text
    (question, _options) = client.questions[0]
    assert "ls | wc -l" in question.content[0].content.text
    assert client.of("tool_call_update", sid)[-1].status == "completed"
    sent = json.dumps(acp_env.api.requests[-1].body["messages"][-1]["content"])
    assert "Files here: [output of `ls | wc -l`" in sent and "3\\n" in sent
    assert client.text(sid) == "Three is few."
