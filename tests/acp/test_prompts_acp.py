"""What `agentls acp` sends the model, captured from a real request: the ACP editor's prompt and
no language tools without a language server (issue 27 items 1, 2)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from acp.schema import TextContentBlock

from messages_api import reply, text
from tests.acp.conftest import AcpEnv, Connection, ScriptedClient, connect

pytestmark = pytest.mark.asyncio(loop_scope="module")

LANGUAGE_TOOLS = {"symbols", "definition", "references", "hover", "callers", "rename"}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp(acp_env: AcpEnv) -> AsyncIterator[Connection]:
    async with connect(acp_env, ScriptedClient(files={})) as connection:
        yield connection


async def test_an_acp_session_gets_the_acp_prompt_and_no_language_tools(
    acp: Connection, acp_env: AcpEnv
) -> None:
    acp_env.api.enqueue(reply(text("Hello.")))
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    result = await acp.conn.prompt(
        session_id=sid, prompt=[TextContentBlock(type="text", text="hi")]
    )
    assert result.stop_reason == "end_turn"
    assert not [r for r in acp_env.api.all_requests if r.rejected]
    body = acp_env.api.requests[-1].body
    system = "".join(block["text"] for block in body["system"])
    assert "through the Agent Client Protocol" in system
    assert "Language servers: none here" in system and "`symbols`" not in system
    assert not LANGUAGE_TOOLS & {tool["name"] for tool in body["tools"]}
