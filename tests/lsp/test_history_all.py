"""agent/getMessages with history "all": the messages before a compaction summary too, marked
summarized, so the panel can offer Restore on a checkpoint older than the compaction."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.editor import Editor

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def messages(editor: Editor, session: str, **extra: Any) -> list[dict[str, Any]]:
    result = await editor.request("agent/getMessages", {"sessionId": session, **extra})
    return list(result["messages"])


def texts(listed: list[dict[str, Any]]) -> list[str]:
    return [
        " ".join(p.get("text", "") for p in m["parts"] if p["type"] in ("text", "summary"))
        for m in listed
    ]


async def test_history_all_reaches_before_the_compaction_and_a_revert_there(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor, api = vscode_like, module_api
    (editor.root / "hist.py").write_text("h = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "hist.py"})),
        reply(tool_use("edit", {"path": "hist.py", "old_string": "h = 1", "new_string": "h = 2"})),
        reply(text("first done")),
        reply(tool_use("edit", {"path": "hist.py", "old_string": "h = 2", "new_string": "h = 3"})),
        reply(text("second done")),
        reply(text("SUMMARY: hist.py was changed twice.")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "first step")
    await editor.prompt(session, "second step")
    assert (editor.root / "hist.py").read_text() == "h = 3\n"
    assert "Compacted" in (await editor.prompt(session, "/compact"))["text"]

    # Without history: from the summary on, nothing marked summarized.
    recent = await messages(editor, session)
    assert [p["type"] for p in recent[0]["parts"]] == ["summary"]
    assert "second step" not in json.dumps(recent)
    assert all("summarized" not in m for m in recent)

    # With "all": every stored message, the ones before the summary marked summarized.
    every = await messages(editor, session, history="all")
    said = texts(every)
    assert (
        said.index("first step")
        < said.index("second step")
        < said.index("SUMMARY: hist.py was changed twice.")
    )
    at = [i for i, m in enumerate(every) if m["parts"][0]["type"] == "summary"][0]
    assert every[at]["id"] == recent[0]["id"] and "summarized" not in every[at]
    assert all(m.get("summarized") is True for m in every[:at])
    assert all("summarized" not in m for m in every[at:])
    assert [m["id"] for m in every[at:]] == [m["id"] for m in recent]

    # Bad input is refused naming the field.
    with pytest.raises(JsonRpcException) as caught:
        await editor.request("agent/getMessages", {"sessionId": session, "history": "some"})
    assert caught.value.code == -32602 and "history" in caught.value.message

    # Restore to the summarized "second step": the files and the conversation before it are back.
    second = [m["id"] for m, t in zip(every, said, strict=True) if t == "second step"][0]
    result = await editor.request(
        "agent/revert", {"sessionId": session, "messageId": second, "scope": "both"}
    )
    assert result["prompt"] == "second step"
    assert (editor.root / "hist.py").read_text() == "h = 2\n"
    back = await messages(editor, session)
    live = [t for m, t in zip(back, texts(back), strict=True) if not m.get("reverted")]
    assert "first step" in live and "first done" in live
    assert "second step" not in live and "SUMMARY: hist.py was changed twice." not in live
    # Nothing is summarized any more: the summary in force went with the reverted messages.
    assert all("summarized" not in m for m in await messages(editor, session, history="all"))
