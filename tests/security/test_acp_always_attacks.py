"""ACP's "always" is as literal as the panel's, and nothing is written outside the workspace through
ACP. Each attack is counted in the security table (tests/security/conftest.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp.schema import TextContentBlock

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.acp.conftest import AcpEnv, ScriptedClient, connect
from tests.security.conftest import SecurityFigures

# ---- ACP: "always" as literal as the panel's, nothing written outside the workspace ----------

ACP = "acp permission"


@pytest.fixture
def acp_home(tmp_path: Path, api: MessagesAPIServer, env: dict[str, str]) -> AcpEnv:
    root = tmp_path / "acp-ws"
    root.mkdir()
    return AcpEnv(api=api, env=env, root=root.resolve(), logs=tmp_path)


async def test_acp_always_is_literal_and_nothing_is_written_outside(
    acp_home: AcpEnv, security_figures: SecurityFigures
) -> None:
    acp_env = acp_home
    root = acp_env.root
    outside = root.parent / "outside.txt"
    client = ScriptedClient(files={}, answers=["allow_always"])
    acp_env.api.enqueue(
        reply(tool_use("bash", {"command": "git status"})),
        reply(
            tool_use("bash", {"command": "git status && touch pwned1"}),
            tool_use("bash", {"command": "git push"}),
            tool_use("write", {"path": "../outside.txt", "content": "x"}),
            tool_use("write", {"path": str(outside), "content": "x"}),
            tool_use("bash", {"command": "git status"}),
        ),
        reply(text("done")),
    )
    async with connect(acp_env, client) as acp:
        session = await acp.conn.new_session(cwd=str(root), mcp_servers=[])
        await asyncio.wait_for(
            acp.conn.prompt(
                session_id=session.session_id, prompt=[TextContentBlock(type="text", text="go")]
            ),
            60,
        )
    asked = [call.raw_input for call, _ in client.questions]
    first_options = client.questions[0][1]
    with security_figures.attempt(ACP):
        # "Always" was offered for the first line, named by what it allows.
        assert "allow_always" in first_options
    with security_figures.attempt(ACP):
        assert {"command": "git status && touch pwned1"} in asked
        assert not (root / "pwned1").exists()
    with security_figures.attempt(ACP):
        assert {"command": "git push"} in asked
    with security_figures.attempt(ACP):
        assert not outside.exists() and client.writes == []
    with security_figures.attempt(ACP):
        # The grant answers the same line again without a question.
        assert asked.count({"command": "git status"}) == 1
