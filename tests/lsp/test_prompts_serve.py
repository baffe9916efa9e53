"""What `agentls serve` sends the model, captured from real requests: the editor's prompt, and the
language tools offered only when the editor declares language requests (issue 27 items 1, 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.lsp.test_language_requests import answering_editor, stop_answering

pytestmark = pytest.mark.asyncio(loop_scope="module")

LANGUAGE_TOOLS = {"symbols", "definition", "references", "hover", "callers", "rename"}


async def first_request(editor: Editor, api: MessagesAPIServer) -> dict[str, Any]:
    start = len(api.requests)
    api.enqueue(reply(text("Hello.")))
    session = await editor.new_session()
    await editor.prompt(session, "hi")
    assert not [r for r in api.all_requests if r.rejected]
    return dict(api.requests[start].body)


def system_text(body: dict[str, Any]) -> str:
    return "".join(block["text"] for block in body["system"])


async def test_an_editor_that_answers_language_requests_gets_the_language_tools(
    module_root: Path, module_api: MessagesAPIServer
) -> None:
    from agentls.protocol.models import LANGUAGE_METHODS

    editor, answers = await answering_editor(
        module_root / "declares", module_api, sorted(LANGUAGE_METHODS)
    )
    try:
        body = await first_request(editor, module_api)
    finally:
        await stop_answering(editor, answers)
    assert LANGUAGE_TOOLS <= {tool["name"] for tool in body["tools"]}
    system = system_text(body)
    assert system.startswith("You are agentls, a coding agent working inside the user's editor.")
    assert "Your edits apply to the editor's buffers" in system
    assert "Language servers: the editor's language servers" in system
    assert "(answered by the editor's language servers)" in system
    assert "the diagnostics of the editor's language servers" in system


async def test_an_editor_without_language_servers_gets_no_language_tools(
    module_root: Path, module_api: MessagesAPIServer
) -> None:
    editor = await start_editor(module_root / "plain", module_api, Profile())
    try:
        body = await first_request(editor, module_api)
    finally:
        await stop_editor(editor)
    assert not LANGUAGE_TOOLS & {tool["name"] for tool in body["tools"]}
    system = system_text(body)
    assert "Language servers: none here" in system and "`symbols`" not in system
