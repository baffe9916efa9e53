"""A headless language server is ready before it answers (language/client.py, headless.py),
with the small real pygls server (tiny_server.py) loading as pyright does: its references see
the open file only until it has loaded, it announces the loading as $/progress, cancels its first
request (ContentModified) and sends notifications of its own."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.config import Settings
from agentls.language.headless import STILL_LOADING
from agentls.tools.references import ReferencesTool
from agentls.verify.workspace import DiskWorkspace
from tests.tools.conftest import ToolTestContext

TINY = str(Path(__file__).with_name("tiny_server.py"))
CORE = "def take(n, xs):\n    return xs[:n]\n"
USER = "from core import take\n\n\ndef first(xs):\n    return take(1, xs)\n"


def loading_settings(loading: str | None, *flags: str, **server: Any) -> Settings:
    command = [sys.executable, TINY, *(["--loading", loading] if loading else []), *flags]
    return Settings.model_validate(
        {"languageServers": {"tiny": {"command": command, "extensions": [".py"], **server}}}
    )


def project(root: Path) -> Path:
    (root / "core.py").write_text(CORE)
    for n in range(3):
        (root / f"user{n}.py").write_text(USER)
    return root / "core.py"


async def references(root: Path, settings: Settings) -> str:
    workspace = DiskWorkspace(root, lambda: settings)
    ctx = ToolTestContext(root, workspace)
    try:
        tool = ReferencesTool()
        result = await tool.run(tool.parse({"path": "core.py", "symbol": "take"}), ctx)
        return result.output
    finally:
        await workspace.languages.aclose()


async def test_the_first_references_wait_for_the_server_to_load_and_match_the_warm_answer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path.resolve()
    project(root)
    caplog.set_level(logging.DEBUG)
    out = await references(root, loading_settings("1.5"))
    # 1 in core.py and 2 in each user file: the whole workspace's, not the open file's only;
    # the ContentModified answer to the first request was asked again, not reported.
    assert "References to `take`" in out and "7 places in 4 files" in out, out
    assert "still loading" not in out
    # tiny/beginProgress and tiny/endProgress are nobody's business: nothing is logged for them.
    assert not [r for r in caplog.records if "unknown method" in r.getMessage()]


async def test_an_answer_before_the_server_is_ready_says_it_may_be_incomplete(
    tmp_path: Path,
) -> None:
    root = tmp_path.resolve()
    project(root)
    out = await references(root, loading_settings("never", timeoutS=5))
    assert "1 place in 1 file" in out, out  # what it has so far: the open file's
    assert f"({STILL_LOADING[0].upper()}{STILL_LOADING[1:]}.)" in out


async def test_a_server_that_announces_nothing_and_publishes_nothing_is_not_said_to_be_loading(
    tmp_path: Path,
) -> None:
    root = tmp_path.resolve()
    project(root)
    # Its timeout is far beyond the quiet wait: the answer comes once it was quiet a while.
    out = await references(root, loading_settings(None, "--quiet", timeoutS=60))
    assert "7 places in 4 files" in out, out
    assert "still loading" not in out
