"""bash's sandbox in a workspace of several folders: every folder is writable as the first is,
and each folder's protected paths (.git, its hooks) stay read-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.workspace.folders import Folders, folders_of
from tests.security.sandbox_support import context, require_bwrap, run

pytestmark = pytest.mark.asyncio


async def test_every_folder_is_writable_and_each_ones_git_is_not(tmp_path: Path) -> None:
    require_bwrap()
    app, lib = tmp_path / "app", tmp_path / "lib"
    app.mkdir()
    (lib / ".git" / "hooks").mkdir(parents=True)
    ctx = context(app)
    folders_of(ctx.workspace).replace(Folders.of([("lib", lib)]).all)
    result = await run(
        ctx,
        f"echo made > {lib}/made.txt; echo hook > {lib}/.git/hooks/pre-commit; "
        f"echo here > {app}/here.txt; true",
    )
    assert "ran in the sandbox" in result.output
    assert (lib / "made.txt").read_text() == "made\n"
    assert (app / "here.txt").read_text() == "here\n"
    assert not (lib / ".git" / "hooks" / "pre-commit").exists()
