"""A sub-agent under `agentls acp`: its question is asked in the session the editor knows (its
parent's), its own steps are not sent as updates of a session the editor never opened, and
session/list leaves its session out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from acp.schema import TextContentBlock

from messages_api import reply, text, tool_use
from tests.acp.conftest import AcpEnv, Connection, ScriptedClient, connect

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp(acp_env: AcpEnv) -> AsyncIterator[Connection]:
    async with connect(acp_env, ScriptedClient(files={})) as connection:
        yield connection


async def test_a_sub_agents_question_reaches_the_editor_in_the_parent_session(
    acp: Connection, acp_env: AcpEnv
) -> None:
    client = acp.client
    client.answers.append("reject_once")
    acp_env.api.enqueue(
        reply(tool_use("task", {"description": "fetch docs", "prompt": "Fetch the docs."})),
        reply(tool_use("webfetch", {"url": "https://docs.example.com/"})),
        reply(text("could not fetch")),
        reply(text("the sub-agent could not fetch")),
    )
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    response = await asyncio.wait_for(
        acp.conn.prompt(session_id=sid, prompt=[TextContentBlock(type="text", text="go")]), 60
    )
    assert response.stop_reason == "end_turn"
    [(question, _options)] = client.questions
    assert "docs.example.com" in str(question)
    # Updates only of the session the editor opened; the task call's result has the report.
    assert {session for session, _update in client.updates} == {sid}
    [task] = [u for u in client.of("tool_call", sid) if "fetch docs" in (u.title or "")]
    assert task.tool_call_id
    listed = await acp.conn.list_sessions(cwd=str(acp.root))
    assert sid in [s.session_id for s in listed.sessions]
    assert len([s for s in listed.sessions if s.title == "fetch docs"]) == 0
