"""The panel's @file context items: a context file that is a link out of the workspace or to a
secret is not sent to the model. Each attack is counted in the security table."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.security.conftest import SecurityFigures

CONTEXT_LINK = "@file context that is a link out or to a secret"
SECRET = "sk-live-OUTSIDE-SECRET"


# ---- @file: a context item the editor names -------------------------------------------------


@pytest.fixture
def api() -> Iterator[MessagesAPIServer]:
    with MessagesAPIServer() as server:
        yield server


@pytest_asyncio.fixture
async def editor(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    started = await start_editor(tmp_path, api, Profile())
    yield started
    await stop_editor(started)


async def test_a_context_file_linking_out_of_the_workspace_or_to_a_secret_is_not_sent(
    editor: Editor, api: MessagesAPIServer, tmp_path: Path, security_figures: SecurityFigures
) -> None:
    """A hostile repository's notes.md is a link to ~/.aws/credentials (or to its .env): the
    user picks it by name with @file and would send what they never saw."""
    outside = tmp_path / "outside-home"
    outside.mkdir()
    (outside / "credentials").write_text(f"aws_secret_access_key = {SECRET}\n")
    (editor.root / ".env").write_text(f"API_KEY={SECRET}\n")
    (editor.root / "notes.md").symlink_to(outside / "credentials")
    (editor.root / "readme.txt").symlink_to(editor.root / ".env")
    (editor.root / "plain.md").write_text("plain notes\n")
    session = await editor.new_session()
    for name in ("notes.md", "readme.txt"):
        with security_figures.attempt(CONTEXT_LINK):
            with pytest.raises(JsonRpcException, match="context.0"):
                await editor.prompt(session, "summarize", context=[{"uri": editor.uri(name)}])
            assert all(SECRET not in str(r.body) for r in api.requests)
    api.enqueue(reply(text("ok")))
    await editor.prompt(session, "summarize", context=[{"uri": editor.uri("plain.md")}])
    assert "plain notes" in str(api.requests[-1].body)
