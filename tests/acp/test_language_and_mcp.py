"""Through `agentls acp` (one process for the module): a rename by the language server agentls
starts (jedi, from the user's `languageServers`), applied through the editor's buffers, and MCP
servers passed in session/new (stdio, and streamable HTTP) reaching the model."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp.schema import EnvVariable, HttpMcpServer, McpServerStdio, TextContentBlock

from messages_api import reply, text, tool_use
from tests.acp.conftest import AcpEnv, Connection, ScriptedClient, connect
from tests.language.conftest import GREET, MAIN, language_servers, make_project
from tests.mcp.conftest import SERVER, http_process, http_server  # noqa: F401 - fixtures

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp(acp_env: AcpEnv) -> AsyncIterator[Connection]:
    config = Path(acp_env.env["XDG_CONFIG_HOME"]) / "agentls" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"languageServers": language_servers()}))
    async with connect(acp_env, ScriptedClient(files={})) as connection:
        yield connection


async def prompt(acp: Connection, session_id: str, words: str) -> Any:
    return await asyncio.wait_for(
        acp.conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=words)]),
        90,
    )


async def test_rename_through_the_editors_buffers(acp: Connection, acp_env: AcpEnv) -> None:
    root = acp.root / "project"
    make_project(root)
    client = acp.client
    assert client.files is not None
    greet, app = root / "shop" / "greet.py", root / "app.py"
    client.files.update({str(greet): GREET, str(app): MAIN})
    client.answers.append("allow_once")
    acp_env.api.enqueue(
        reply(tool_use("read", {"path": "shop/greet.py"}), tool_use("read", {"path": "app.py"})),
        reply(
            tool_use("rename", {"path": "shop/greet.py", "symbol": "greet", "new_name": "salute"})
        ),
        reply(text("renamed")),
    )
    sid = (await acp.conn.new_session(cwd=str(root), mcp_servers=[])).session_id
    result = await prompt(acp, sid, "rename greet to salute")

    assert result.stop_reason == "end_turn"
    # One question for the whole change: each file's text before and after.
    (question, options) = client.questions[-1]
    assert question.kind == "edit" and "allow_always" not in options
    diffs = {Path(c.path).name: c for c in question.content or []}
    assert set(diffs) == {"greet.py", "app.py"}
    assert diffs["app.py"].old_text == MAIN and "salute(" in diffs["app.py"].new_text
    # Applied in the editor (both buffers), not on disk.
    written = dict(client.writes)
    assert set(written) == {str(greet), str(app)}
    assert "def salute(name):" in client.files[str(greet)]
    assert client.files[str(app)].count("salute(") == 2
    assert greet.read_text() == GREET and app.read_text() == MAIN


async def test_mcp_servers_from_session_new(
    acp: Connection,
    acp_env: AcpEnv,
    http_server: str,  # noqa: F811
) -> None:
    assert acp.init.agent_capabilities.mcp_capabilities.http is True
    root = acp.root / "mcp"
    root.mkdir()
    client = acp.client
    client.answers.extend(["allow_once", "allow_once"])
    acp_env.api.enqueue(
        reply(
            tool_use("mcp__local__echo", {"text": "over stdio"}),
            tool_use("mcp__web__add", {"a": 2, "b": 3}),
        ),
        reply(text("both answered")),
    )
    servers: list[Any] = [
        McpServerStdio(
            name="local",
            command=sys.executable,
            args=[SERVER],
            env=[EnvVariable(name="MCP_TEST_SECRET", value="unused")],
        ),
        HttpMcpServer(type="http", name="web", url=http_server, headers=[]),
    ]
    sid = (await acp.conn.new_session(cwd=str(root), mcp_servers=servers)).session_id
    result = await prompt(acp, sid, "use the tools")

    assert result.stop_reason == "end_turn"
    first, second = acp_env.api.requests[-2:]
    names = [t["name"] for t in first.body["tools"]]
    assert "mcp__local__echo" in names and "mcp__web__add" in names
    results = [
        str(block["content"])
        for block in second.body["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    ]
    assert "echo: over stdio" in results[0] and "5" in results[1]
    kinds = {s.title: s.kind for s in client.of("tool_call", sid)}
    assert set(kinds.values()) == {"other"}


async def test_an_mcp_tools_progress_is_its_tool_call_update(
    acp: Connection, acp_env: AcpEnv
) -> None:
    root = acp.root / "progress"
    root.mkdir()
    acp.client.answers.append("allow_once")
    acp_env.api.enqueue(reply(tool_use("mcp__local__steps", {"count": 2})), reply(text("done")))
    servers: list[Any] = [
        McpServerStdio(name="local", command=sys.executable, args=[SERVER], env=[])
    ]
    sid = (await acp.conn.new_session(cwd=str(root), mcp_servers=servers)).session_id
    result = await prompt(acp, sid, "step")
    assert result.stop_reason == "end_turn"
    shown = [
        block.content.text
        for update in acp.client.of("tool_call_update", sid)
        if update.status == "in_progress"
        for block in update.content or []
    ]
    assert shown == ["1/2: step 1", "2/2: step 2"]


async def test_an_mcp_servers_prompts_join_the_commands_once_it_runs(
    acp: Connection, acp_env: AcpEnv
) -> None:
    root = acp.root / "prompts"
    root.mkdir()
    acp_env.api.enqueue(reply(text("hello")), reply(text("reviewed")))
    servers: list[Any] = [
        McpServerStdio(name="local", command=sys.executable, args=[SERVER], env=[])
    ]
    sid = (await acp.conn.new_session(cwd=str(root), mcp_servers=servers)).session_id
    await prompt(acp, sid, "hi")  # the servers start at the session's first turn
    names = [c.name for c in acp.client.of("available_commands_update", sid)[-1].available_commands]
    assert "mcp__local__review" in names
    result = await prompt(acp, sid, "/mcp__local__review app.py")
    assert result.stop_reason == "end_turn"
    sent = acp_env.api.requests[-1].body["messages"][-1]["content"]
    assert "Review app.py carefully." in str(sent)
