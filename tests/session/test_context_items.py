"""A prompt's context items in the core (Agent.prompt_with_items, the one call the editor's front
end makes): a labelled text is cut past 100,000 characters; a FIFO or a file past 4 MB is attached
by name without being read (nothing blocks); a link to a secret or out of the workspace is refused
naming its item, before anything is sent; a sub-agent's session takes no prompts; an unknown
session is a KeyError."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentls.session import FileItem, PromptRefused, TextItem
from agentls.session.context_items import CONTEXT_MAX_FILE_BYTES
from messages_api import MessagesAPIServer, reply, text
from tests.conftest import HarnessFactory


def file_item(root: Path, name: str) -> FileItem:
    path = root / name
    return FileItem(path=path, uri=path.as_uri())


async def test_items_reach_the_model_in_order_and_a_long_text_is_cut(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    session = await h.agent.new_session()
    api.enqueue(reply(text("fixed")))
    items = [TextItem(label="@git", text="x" * 100_050), file_item(h.root, "calc.py")]
    await h.agent.prompt_with_items(session.id, "fix it", items)
    content = api.requests[-1].body["messages"][0]["content"]
    assert content[0]["text"].endswith("x\n... (cut)\n</context>")
    assert "return a - b" in content[1]["text"]
    assert content[2]["text"] == "fix it"


async def test_a_fifo_or_a_huge_file_is_attached_by_name_without_being_read(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    os.mkfifo(h.root / "pipe.txt")  # opening it would wait for a writer forever
    (h.root / "huge.log").write_bytes(b"y" * (CONTEXT_MAX_FILE_BYTES + 1))
    session = await h.agent.new_session()
    api.enqueue(reply(text("nothing to read")))
    items = [file_item(h.root, "pipe.txt"), file_item(h.root, "huge.log")]
    await h.agent.prompt_with_items(session.id, "look", items)
    content = api.requests[-1].body["messages"][0]["content"]
    assert content[0]["text"] == f'<context uri="{(h.root / "pipe.txt").as_uri()}">\n\n</context>'
    assert content[1]["text"] == f'<context uri="{(h.root / "huge.log").as_uri()}">\n\n</context>'


async def test_a_link_to_a_secret_or_out_of_the_workspace_is_refused_naming_its_item(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    h = await make_harness()
    (h.root / ".env").write_text("API_KEY=sk-secret\n")
    (h.root / "readme.txt").symlink_to(h.root / ".env")
    (tmp_path / "credentials").write_text("aws_secret_access_key = sk-secret\n")
    (h.root / "notes.md").symlink_to(tmp_path / "credentials")
    session = await h.agent.new_session()
    for name, why in [("readme.txt", "not read without asking"), ("notes.md", "outside")]:
        items = [TextItem(label="@problems", text="none"), file_item(h.root, name)]
        with pytest.raises(PromptRefused, match=why) as refused:
            await h.agent.prompt_with_items(session.id, "summarize", items)
        assert refused.value.field == "context.1"
    assert api.requests == []


async def test_a_sub_agent_session_takes_no_prompts_and_an_unknown_one_is_a_key_error(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    parent = await h.agent.new_session()
    child = await h.agent.new_session()
    await h.store.set_parent(child.id, parent.id, "explore")
    h.agent._sessions.pop(child.id)  # loaded again from the store, as after a restart
    with pytest.raises(PromptRefused, match="sub-agent's session") as refused:
        await h.agent.prompt_with_items(child.id, "hi")
    assert refused.value.field == "sessionId"
    with pytest.raises(KeyError):
        await h.agent.prompt_with_items("ses_unknown", "hi")
    assert api.requests == []
