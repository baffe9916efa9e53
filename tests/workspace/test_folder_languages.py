"""The language servers agentls starts, per workspace folder: a file of the second folder is
answered by a server started in that folder from that folder's own `languageServers`; a folder
whose config sets none has none (the first folder's are not borrowed for it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.verify.workspace import DiskWorkspace
from agentls.workspace.folders import Folders, folders_of
from tests.language.conftest import jedi_settings, make_project

pytestmark = pytest.mark.asyncio


def symbols(path: Path) -> dict[str, object]:
    return {"textDocument": {"uri": path.as_uri()}}


async def test_each_folder_has_its_own_servers(tmp_path: Path) -> None:
    app = make_project(tmp_path / "app")
    lib = make_project(tmp_path / "lib")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "x.py").write_text("X = 1\n")
    ws = DiskWorkspace(app, jedi_settings)
    folders = folders_of(ws)
    folders.replace(Folders.of([("lib", lib), ("bare", bare)]).all)
    folders.settings = {lib: jedi_settings(), bare: Settings()}
    languages = ws.languages
    try:
        in_app = await languages.request(
            "textDocument/documentSymbol", symbols(app / "app.py"), app / "app.py"
        )
        greet = lib / "shop" / "greet.py"
        in_lib = await languages.request("textDocument/documentSymbol", symbols(greet), greet)
        assert in_app and "greet" in str(in_lib)
        # One server per folder, each started in its own folder.
        assert len(languages.pids()) == 2  # type: ignore[attr-defined]
        # The bare folder's config sets no language server: none answers there.
        assert languages.methods(bare / "x.py") == frozenset()
    finally:
        await languages.aclose()
    assert languages.pids() == []  # type: ignore[attr-defined]
