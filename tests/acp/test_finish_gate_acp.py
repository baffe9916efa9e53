"""An ACP client sees the finish gate's result on the turn: a thought line each time the turn's
files are checked again before it may end (`agentls acp`, a scripted client holding the editor's
buffers, the local Messages API)."""

from __future__ import annotations

import asyncio

import pytest
from acp.schema import TextContentBlock

from messages_api import reply, text, tool_use
from tests.acp.conftest import TURN_S, AcpEnv, ScriptedClient, connect

pytestmark = pytest.mark.asyncio(loop_scope="module")

GOOD = "def compute(x):\n    return x * 2\n"


async def test_the_new_error_goes_back_and_the_client_is_told_each_check(acp_env: AcpEnv) -> None:
    path = acp_env.root / "gate.py"
    path.write_text(GOOD)
    client = ScriptedClient(files={str(path): GOOD}, answers=["allow_once", "allow_once"])
    broken = {"path": "gate.py", "old_string": "def compute(x):", "new_string": "def compute(x)"}
    fixed = {"path": "gate.py", "old_string": "def compute(x)\n", "new_string": "def compute(x):\n"}
    acp_env.api.enqueue(
        reply(tool_use("read", {"path": "gate.py"})),
        reply(tool_use("edit", broken)),
        reply(text("Done.")),
        reply(tool_use("edit", fixed)),
        reply(text("Fixed.")),
    )
    async with connect(acp_env, client) as acp:
        session = await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])
        sid = session.session_id
        words = [TextContentBlock(type="text", text="change compute")]
        result = await asyncio.wait_for(acp.conn.prompt(session_id=sid, prompt=words), TURN_S)
    assert result.stop_reason == "end_turn"
    assert client.files is not None and client.files[str(path)] == GOOD
    thoughts = "".join(t.content.text for t in client.of("agent_thought_chunk", sid))
    assert thoughts == (
        "\n[finish gate] Checked 1 file: 1 new error, sent back to the model (1 of 2)\n"
        "\n[finish gate] Checked 1 file: no new errors\n"
    )
    # The model was told where: the file and line, agentls' own syntax check.
    told = acp_env.api.requests[3].body["messages"][-1]["content"]
    said = told if isinstance(told, str) else "".join(b.get("text", "") for b in told)
    assert "gate.py:1: error [agentls] SyntaxError" in said, said
