"""An ACP client sees each hook's run on the turn as a thought line, and a PreToolUse hook that
blocks `rm` keeps the file (`agentls acp`, the user's ~/.claude/settings.json, a real hook script,
the local Messages API)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from acp.schema import TextContentBlock

from messages_api import reply, text, tool_use
from tests.acp.conftest import TURN_S, AcpEnv, ScriptedClient, connect

pytestmark = pytest.mark.asyncio(loop_scope="module")

BLOCK_RM = """
import json, sys
event = json.load(sys.stdin)
if event["tool_input"]["command"].split()[:1] == ["rm"]:
    print("rm is not allowed here", file=sys.stderr)
    sys.exit(2)
"""


async def test_a_blocking_hook_is_a_thought_line_and_the_file_stays(acp_env: AcpEnv) -> None:
    hook = acp_env.logs / "block_rm.py"
    hook.write_text(BLOCK_RM)
    settings = Path(acp_env.env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    group = {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": f"{sys.executable} {hook}"}],
    }
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    (acp_env.root / "keep.txt").write_text("keep\n")
    client = ScriptedClient(answers=["allow_once"])
    acp_env.api.enqueue(
        reply(tool_use("bash", {"command": "rm keep.txt"})), reply(text("Kept it."))
    )
    try:
        async with connect(acp_env, client) as acp:
            session = await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])
            sid = session.session_id
            words = [TextContentBlock(type="text", text="clean up")]
            result = await asyncio.wait_for(acp.conn.prompt(session_id=sid, prompt=words), TURN_S)
    finally:
        settings.unlink()
    assert result.stop_reason == "end_turn"
    assert (acp_env.root / "keep.txt").exists()
    thoughts = "".join(t.content.text for t in client.of("agent_thought_chunk", sid))
    pattern = r"\n\[hook\] PreToolUse Bash: .+ blocked \(exit 2, \d+ ms\): rm is not allowed here\n"
    assert re.fullmatch(pattern, thoughts), thoughts
