"""`agentls acp` with a client that declares no fs capabilities: the disk is the workspace."""

from __future__ import annotations

import asyncio

from acp.schema import TextContentBlock

from messages_api import reply, text, tool_use
from tests.acp.conftest import TURN_S, AcpEnv, ScriptedClient, connect


async def test_without_fs_the_disk_is_the_workspace(acp_env: AcpEnv) -> None:
    path = acp_env.root / "plain.py"
    path.write_text("Z = 1\n")
    # files=None: a read_text_file or write_text_file request would fail the test.
    client = ScriptedClient(files=None, answers=["allow_always"])
    acp_env.api.enqueue(
        reply(tool_use("read", {"path": "plain.py"})),
        reply(tool_use("edit", {"path": "plain.py", "old_string": "Z = 1", "new_string": "Z = 2"})),
        reply(tool_use("edit", {"path": "plain.py", "old_string": "Z = 2", "new_string": "Z = 3"})),
        reply(text("Z is 3.")),
    )
    async with connect(acp_env, client, fs=False) as acp:
        fs = acp.init.agent_capabilities
        assert fs.load_session is True
        sid = (await acp.conn.new_session(cwd=str(acp_env.root), mcp_servers=[])).session_id
        result = await asyncio.wait_for(
            acp.conn.prompt(
                session_id=sid, prompt=[TextContentBlock(type="text", text="set Z to 3")]
            ),
            TURN_S,
        )
    assert result.stop_reason == "end_turn"
    assert path.read_text() == "Z = 3\n"
    # "Always" (this session) allowed the second edit of the file without a question.
    assert len(client.questions) == 1
    call, options = client.questions[0]
    assert "allow_always" in options and "allow_always_project" in options
    assert call.content is not None and call.content[0].new_text == "Z = 2\n"
    finals = [u.status for u in client.of("tool_call_update", sid) if u.status != "in_progress"]
    assert finals == ["completed", "completed", "completed"]


async def test_an_untrusted_workspace_config_is_said_once_per_session(acp_env: AcpEnv) -> None:
    root = acp_env.root / "untrusted"
    (root / ".agentls").mkdir(parents=True)
    (root / ".agentls" / "config.json").write_text('{"permissions": {"edit": "allow"}}')
    client = ScriptedClient(files=None)
    acp_env.api.enqueue(reply(text("one")), reply(text("two")))
    async with connect(acp_env, client, fs=False) as acp:
        sid = (await acp.conn.new_session(cwd=str(root), mcp_servers=[])).session_id
        for words in ("first", "second"):
            await asyncio.wait_for(
                acp.conn.prompt(session_id=sid, prompt=[TextContentBlock(type="text", text=words)]),
                TURN_S,
            )
    said = client.text(sid)
    assert said.startswith("agentls: ignored ") and "agentls trust" in said
    assert said.count("agentls: ignored") == 1 and said.endswith("one" + "two")
