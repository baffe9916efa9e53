"""ACP session/new's additionalDirectories: each is a workspace folder as inside as the cwd (its
files read through the client, named "<folder>/<path>"; its AGENTS.md in the prompt), advertised
in sessionCapabilities; a relative or missing directory is Invalid params naming the field."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from acp import RequestError
from acp.schema import TextContentBlock

from messages_api import reply, text, tool_use
from tests.acp.conftest import TURN_S, AcpEnv, Connection, ScriptedClient, connect

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp(acp_env: AcpEnv) -> AsyncIterator[Connection]:
    async with connect(acp_env, ScriptedClient(files={})) as connection:
        yield connection


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = (tmp_path_factory.mktemp("more") / "lib").resolve()
    folder.mkdir()
    (folder / "util.py").write_text("VALUE = 1\n")
    (folder / "AGENTS.md").write_text("Library rule: no imports.\n")
    return folder


async def test_additional_directories_are_advertised(acp: Connection) -> None:
    assert acp.init.agent_capabilities.session_capabilities.additional_directories is not None


async def test_a_file_of_an_additional_directory_is_read(
    acp: Connection, acp_env: AcpEnv, lib: Path
) -> None:
    assert acp.client.files is not None
    acp.client.files[str(lib / "util.py")] = "VALUE = 1  # in the editor\n"
    acp_env.api.enqueue(reply(tool_use("read", {"path": "lib/util.py"})), reply(text("ok")))
    session = await acp.conn.new_session(
        cwd=str(acp.root), mcp_servers=[], additional_directories=[str(lib)]
    )
    await asyncio.wait_for(
        acp.conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text="read")]
        ),
        TURN_S,
    )
    body = acp_env.api.requests[-1].body
    result = json.dumps(body["messages"][-1]["content"])
    assert "in the editor" in result
    assert "Library rule: no imports." in json.dumps(body["system"])


async def test_a_relative_directory_is_refused_naming_the_field(acp: Connection) -> None:
    with pytest.raises(RequestError) as raised:
        await acp.conn.new_session(
            cwd=str(acp.root), mcp_servers=[], additional_directories=["lib"]
        )
    assert "additionalDirectories" in json.dumps(raised.value.data)
