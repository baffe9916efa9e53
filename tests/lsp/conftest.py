"""Fixtures: one `agentls serve` process per module and profile, talking to a local Messages API."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from messages_api import MessagesAPIServer
from tests.lsp.editor import Editor, Profile, make_client


@pytest.fixture(scope="module")
def module_api() -> Iterator[MessagesAPIServer]:
    with MessagesAPIServer() as server:
        yield server


@pytest.fixture(scope="module")
def module_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lsp")


def server_env(api: MessagesAPIServer, data: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="test-key",
        AGENTLS_DATA_DIR=str(data),
        XDG_CONFIG_HOME=str(data / "config"),
    )
    env.pop("AGENTLS_MODEL", None)
    return env


async def start_editor(
    root: Path,
    api: MessagesAPIServer,
    profile: Profile,
    agent_options: dict[str, Any] | None = None,
) -> Editor:
    workspace = root / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    client = make_client()
    await client.start_io(
        sys.executable, "-m", "agentls.cli.main", "serve", env=server_env(api, root / "data")
    )
    editor = Editor(client=client, root=workspace, profile=profile)
    # The finish gate off unless a test asks for it (test_finish_gate_lsp.py): a turn whose edit
    # leaves an error would otherwise take more steps than its scripted replies.
    options = {
        "model": "claude-sonnet-5-5",
        "apiRetryBaseDelayS": 0.01,
        "verifyWaitS": 1.0,
        "finishGate": "off",
    }
    options.update(agent_options or {})
    editor.init_result = await editor.initialize(options)  # type: ignore[attr-defined]
    return editor


async def stop_editor(editor: Editor) -> None:
    editor.released.set()
    await asyncio.sleep(0.05)
    try:
        await editor.client.shutdown_session()
    finally:
        await editor.client.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def vscode_like(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A client that declares everything our VS Code extension declares."""
    editor = await start_editor(module_root, module_api, Profile())
    yield editor
    await stop_editor(editor)
