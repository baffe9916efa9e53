"""Over LSP: a session's total counts its sub-agents' usage, which agent/listSessions and the
usage event also give as their share (subagentUsage, subagents)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


def usage(n: int) -> dict[str, int]:
    return {"input_tokens": n, "output_tokens": 0}


async def test_the_session_total_counts_its_sub_agents_and_says_their_share(
    editor: Editor, api: MessagesAPIServer
) -> None:
    session = await editor.new_session()
    api.enqueue(
        reply(tool_use("task", {"description": "look", "prompt": "Say hi."}), usage=usage(10)),
        reply(text("hi"), usage=usage(1000)),
        reply(text("done"), usage=usage(100)),
    )
    result = await editor.prompt(session, "go")
    assert result["finishReason"] == "end_turn"
    assert result["usage"]["inputTokens"] == 1110
    listed = await editor.request("agent/listSessions", {})
    (info,) = [s for s in listed["sessions"] if s["sessionId"] == session]
    assert info["usage"]["inputTokens"] == 1110
    assert info["subagentUsage"]["inputTokens"] == 1000
    last = editor.session_events(session, "usage")[-1]
    assert last["session"]["inputTokens"] == 1110 and last["subagents"]["inputTokens"] == 1000
