"""agent/setApiKey: a key set from the editor is used by the running server at once (no restart):
the model list says the provider has it, the next turn's request carries it, a changed key
replaces it; a variable no provider reads is refused naming the field; the key reaches neither a
bash command's environment, nor the store, nor an error message."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import server_env, stop_editor
from tests.lsp.editor import Editor, Profile, make_client


def sent_key(api: MessagesAPIServer) -> str:
    headers = api.requests[-1].headers
    return headers.get("x-api-key", "") or headers.get("authorization", "")[7:]


@pytest_asyncio.fixture
async def keyless(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """`agentls serve` started with no API key in its environment (a first run)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = server_env(api, tmp_path / "data")
    env.pop("ANTHROPIC_API_KEY")
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    client = make_client()
    await client.start_io(sys.executable, "-m", "agentls.cli.main", "serve", env=env)
    editor = Editor(client=client, root=workspace, profile=Profile())
    await editor.initialize(
        {
            "model": "claude-sonnet-5-5",
            "apiRetryBaseDelayS": 0.01,
            "permissions": {"bash": "allow"},
            "sandbox": "off",
        }
    )
    yield editor
    await stop_editor(editor)


def has_key(listed: dict[str, object], model: str) -> bool:
    rows = {m["model"]: m for m in listed["models"]}  # type: ignore[attr-defined]
    return bool(rows[model]["hasKey"])


async def test_a_key_set_while_running_is_used_by_the_next_turn(
    keyless: Editor, api: MessagesAPIServer, tmp_path: Path
) -> None:
    assert not has_key(await keyless.request("agent/listModels", {}), "claude-sonnet-5-5")
    first = "sk-ant-api03-" + os.urandom(8).hex()
    answer = await keyless.request("agent/setApiKey", {"name": "ANTHROPIC_API_KEY", "key": first})
    assert answer == {"hasKey": True}
    assert has_key(await keyless.request("agent/listModels", {}), "claude-sonnet-5-5")

    session = await keyless.new_session()
    api.enqueue(
        reply(tool_use("bash", {"command": "env; cat /proc/self/environ | tr '\\0' '\\n'"}))
    )
    api.enqueue(reply(text("looked")))
    await keyless.prompt(session, "show the environment")
    assert sent_key(api) == first
    tool_results = str(api.requests[-1].body["messages"])
    assert "PATH=" in tool_results  # the command ran and its output reached the model
    assert first not in tool_results

    second = "sk-ant-api03-" + os.urandom(8).hex()
    await keyless.request("agent/setApiKey", {"name": "ANTHROPIC_API_KEY", "key": second})
    api.enqueue(reply(text("again")))
    await keyless.prompt(session, "hello")
    assert sent_key(api) == second

    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert first.encode() not in data and second.encode() not in data, path


async def test_an_empty_key_forgets_it(keyless: Editor) -> None:
    await keyless.request("agent/setApiKey", {"name": "ANTHROPIC_API_KEY", "key": "sk-x"})
    answer = await keyless.request("agent/setApiKey", {"name": "ANTHROPIC_API_KEY", "key": ""})
    assert answer == {"hasKey": False}
    assert not has_key(await keyless.request("agent/listModels", {}), "claude-sonnet-5-5")


async def test_a_variable_no_provider_reads_is_refused_naming_the_field(keyless: Editor) -> None:
    secret = "sk-ant-api03-" + os.urandom(8).hex()
    for name in ("PATH", "LD_PRELOAD", "1BAD", ""):
        with pytest.raises(JsonRpcException, match="name") as caught:
            await keyless.request("agent/setApiKey", {"name": name, "key": secret})
        assert secret not in str(caught.value)
    with pytest.raises(JsonRpcException, match="key") as caught:
        await keyless.request("agent/setApiKey", {"name": "ANTHROPIC_API_KEY", "key": "k" * 3000})
    assert "kkkk" not in str(caught.value)
