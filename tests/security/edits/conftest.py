"""Editors for the attacks on edits: real `agentls serve` processes over stdio (one per fixture
and module), the real SDK against the local Messages API, a real store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from messages_api import MessagesAPIServer
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.lsp.test_language_requests import (
    RENAME_METHODS,
    LanguageAnswers,
    answering_editor,
    stop_answering,
)


@pytest.fixture(scope="module")
def api() -> Iterator[MessagesAPIServer]:
    with MessagesAPIServer() as server:
        yield server


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("r7")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def panel(root: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A client with an approvals panel that answers each question itself (the test does)."""
    editor = await start_editor(root / "panel", api, Profile())
    editor.auto_approve = False
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def after(root: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """Review "after", a deny rule, a folder outside the workspace the rules open (asking);
    every question answered "once" (what matters is that it was asked)."""
    outside = root / "outside"
    outside.mkdir()
    rules = {"write": {"locked/**": "deny", f"{outside}/**": "ask"}}
    editor = await start_editor(
        root / "after", api, Profile(), {"review": "after", "permissions": rules}
    )
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(root: Path, api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """Review "before", every question answered "once": for reverts."""
    editor = await start_editor(root / "plain", api, Profile())
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def renamer(
    root: Path, api: MessagesAPIServer
) -> AsyncIterator[tuple[Editor, LanguageAnswers]]:
    editor, answers = await answering_editor(root / "rename", api, RENAME_METHODS)
    editor.auto_approve = False
    yield editor, answers
    await stop_answering(editor, answers)
