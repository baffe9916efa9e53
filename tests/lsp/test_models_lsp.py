"""The panel's model picker over LSP: agent/listModels (prices, whether each provider's key is
set) and agent/setModel (the next turn's request names the model; an unknown provider is an
error naming the field)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

GATEWAY = {
    "type": "openai",
    "baseUrl": "http://127.0.0.1:9/v1",
    "apiKeyEnv": "AGENTLS_TEST_GATEWAY_KEY_UNSET",
    "models": {"coder": {"contextWindow": 65536, "inputPrice": 0.5, "outputPrice": 1.5}},
}


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile(), {"providers": {"gw": GATEWAY}})
    yield started
    await stop_editor(started)


async def test_list_models_with_prices_and_keys(editor: Editor) -> None:
    listed = await editor.request("agent/listModels", {})
    assert listed["defaultModel"] == "claude-sonnet-5-5"
    by_id = {m["model"]: m for m in listed["models"]}
    sonnet = by_id["claude-sonnet-5-5"]
    assert (sonnet["provider"], sonnet["inputUsdPerMTok"], sonnet["outputUsdPerMTok"]) == (
        "anthropic",
        2.0,
        10.0,
    )
    assert (sonnet["keyEnv"], sonnet["hasKey"]) == ("ANTHROPIC_API_KEY", True)
    coder = by_id["gw/coder"]
    assert (coder["contextWindow"], coder["inputUsdPerMTok"], coder["outputUsdPerMTok"]) == (
        65536,
        0.5,
        1.5,
    )
    assert (coder["keyEnv"], coder["hasKey"]) == ("AGENTLS_TEST_GATEWAY_KEY_UNSET", False)
    assert listed["models"][0]["provider"] == "anthropic"


async def test_set_model_changes_the_next_turn(editor: Editor, api: MessagesAPIServer) -> None:
    session = await editor.new_session()
    answer = await editor.request(
        "agent/setModel", {"sessionId": session, "model": "claude-haiku-5-5"}
    )
    assert answer == {"model": "claude-haiku-5-5"}
    api.enqueue(reply(text("hi")))
    await editor.prompt(session, "hello")
    assert api.requests[-1].body["model"] == "claude-haiku-5-5"


async def test_set_model_refuses_an_unknown_provider_and_session(editor: Editor) -> None:
    session = await editor.new_session()
    with pytest.raises(JsonRpcException, match="model"):
        await editor.request("agent/setModel", {"sessionId": session, "model": "nobody/x"})
    with pytest.raises(JsonRpcException, match="sessionId"):
        await editor.request("agent/setModel", {"sessionId": "nope", "model": "claude-opus-5"})
    with pytest.raises(JsonRpcException, match="model"):
        await editor.request("agent/setModel", {"sessionId": session, "model": ""})
