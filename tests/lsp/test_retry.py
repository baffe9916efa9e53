"""Over LSP: a failed turn's error event is typed (kind, sentence, next step, retryable,
details), and agent/retry goes on from the failed step once the API is back; it is refused with
an Invalid params error naming sessionId when there is nothing to retry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, connection_reset, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile(), {"apiMaxAttempts": 1})
    yield started
    await stop_editor(started)


async def test_an_unreachable_api_is_a_typed_error_and_retry_goes_on_when_it_is_back(
    editor: Editor, api: MessagesAPIServer
) -> None:
    (editor.root / "a.txt").write_text("alpha\n")
    session = await editor.new_session()
    api.enqueue(reply(tool_use("read", {"path": "a.txt"})))
    api.enqueue(connection_reset())  # the second step's call fails
    failed = await editor.prompt(session, "read a.txt")
    assert failed["finishReason"] == "error"
    (error,) = editor.session_events(session, "error")
    assert error["kind"] == "network" and error["retryable"] is True
    assert error["message"] == "The model's API could not be reached: the connection was reset."
    assert error["nextStep"].startswith("Check your network connection")
    assert "Connection reset" in error["details"]

    api.stop()  # down: the retry fails the same way
    down = await editor.request("agent/retry", {"sessionId": session})
    assert down["finishReason"] == "error"
    assert "connection was refused" in editor.session_events(session, "error")[-1]["message"]

    api.start()  # back
    api.enqueue(reply(text("alpha it is")))
    done = await editor.request("agent/retry", {"sessionId": session})
    assert done["finishReason"] == "end_turn" and done["text"] == "alpha it is"
    starts = editor.session_events(session, "turn-start")
    assert [s.get("retry") for s in starts] == [None, True, True]
    assert len(editor.session_events(session, "tool-result")) == 1  # the read ran once
    shown = await editor.request("agent/getMessages", {"sessionId": session})
    assert [(m["role"], m.get("reverted")) for m in shown["messages"]] == [
        ("user", None),
        ("assistant", None),
        ("assistant", True),
        ("assistant", True),
        ("assistant", None),
    ]

    with pytest.raises(JsonRpcException) as refused:
        await editor.request("agent/retry", {"sessionId": session})
    assert "sessionId" in str(refused.value) and "nothing to retry" in str(refused.value)
    with pytest.raises(JsonRpcException) as unknown:
        await editor.request("agent/retry", {"sessionId": "ses_nope"})
    assert "sessionId" in str(unknown.value)
