"""An edit's reach without an editor: DiskWorkspace with the real jedi-language-server started by
agentls (documentSymbol and references), and agentls' own check of the calls as the source of the
other files' diagnostics (jedi reports syntax errors only)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from agentls.config import Settings
from agentls.verify.reach import describe_reach, reach_before
from agentls.verify.workspace import DiskWorkspace

JEDI = shutil.which("jedi-language-server", path=os.path.dirname(sys.executable)) or shutil.which(
    "jedi-language-server"
)

GREET = 'def greet(name):\n    return "hello " + name\n\n\ndef unused():\n    return 1\n'
APP = 'from shop.greet import greet\n\n\ndef run():\n    print(greet("world"))\n    return greet(name="again")\n'


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def started(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[DiskWorkspace]:
    tmp_path = tmp_path_factory.mktemp("reach")
    if JEDI is None:
        pytest.fail("jedi-language-server is not installed (pip install -e '.[dev]')")
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "greet.py").write_text(GREET)
    (tmp_path / "app.py").write_text(APP)
    settings = Settings.model_validate(
        {"languageServers": {"python": {"command": [JEDI], "extensions": [".py"]}}}
    )
    ws = DiskWorkspace(tmp_path, lambda: settings)
    # Started before the edits: a slow start under load is not what these tests are about.
    uri = (tmp_path / "app.py").as_uri()
    await ws.languages.request(
        "textDocument/documentSymbol", {"textDocument": {"uri": uri}}, tmp_path / "app.py"
    )
    yield ws
    await ws.languages.aclose()


@pytest_asyncio.fixture(loop_scope="module")
async def workspace(started: DiskWorkspace) -> DiskWorkspace:
    """The project as it was (jedi, started once, reads the files again at each request)."""
    (started.root / "shop" / "greet.py").write_text(GREET)
    (started.root / "app.py").write_text(APP)
    return started


def shown(ws: DiskWorkspace, reach: object) -> str:
    assert reach is not None
    return describe_reach(reach, lambda p: p.relative_to(ws.root).as_posix(), lambda p: True)  # type: ignore[arg-type]


async def test_a_new_required_parameter_breaks_the_calls(workspace: DiskWorkspace) -> None:
    path = workspace.root / "shop" / "greet.py"
    new = GREET.replace("def greet(name):", "def greet(name, punctuation):")
    outcome = await workspace.write_text(path, new, GREET)
    assert outcome.applied and path.read_text() == new
    assert shown(workspace, outcome.reach).splitlines() == [
        "Other files using what this edit changed (greet): 2 new error(s) in 1 file(s):",
        "  app.py:",
        "    line 5: error [agentls] call of greet() (shop/greet.py): missing a required "
        "argument: 'punctuation'",
        "    line 6: error [agentls] call of greet() (shop/greet.py): missing a required "
        "argument: 'punctuation'",
    ]


async def test_a_renamed_function_breaks_the_import(workspace: DiskWorkspace) -> None:
    path = workspace.root / "shop" / "greet.py"
    new = GREET.replace("def greet(name):", "def salute(name):")
    outcome = await workspace.write_text(path, new, GREET)
    text = shown(workspace, outcome.reach)
    assert "app.py:" in text
    assert "line 1: error [agentls] 'greet' is no longer defined in shop/greet.py" in text


async def test_an_edit_that_breaks_no_caller(workspace: DiskWorkspace) -> None:
    path = workspace.root / "shop" / "greet.py"
    new = GREET.replace('"hello " + name', '"hi " + name')
    outcome = await workspace.write_text(path, new, GREET)
    assert shown(workspace, outcome.reach) == (
        "Other files using what this edit changed (greet): 1 checked, no new errors."
    )
    # A function no other file uses: nothing about other files at all.
    outcome = await workspace.write_text(path, new.replace("return 1", "return 2"), new)
    assert outcome.applied and outcome.reach is None


async def test_without_a_language_server_verification_is_as_before(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text(GREET)
    (tmp_path / "app.py").write_text(APP.replace("shop.greet", "greet"))
    new = GREET.replace("def greet(name):", "def greet(name, punctuation):")
    for settings in (None, Settings()):
        ws = DiskWorkspace(tmp_path, None if settings is None else lambda: Settings())
        outcome = await ws.write_text(
            tmp_path / "greet.py", new, (tmp_path / "greet.py").read_text()
        )
        assert outcome.applied and outcome.reach is None
        assert outcome.diagnostics == (
            "Diagnostics (agentls syntax check only: not names, types or tests): no syntax errors in greet.py."
        )
        await ws.languages.aclose()
        (tmp_path / "greet.py").write_text(GREET)


async def test_a_server_that_does_not_answer_does_not_hold_the_edit_up(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text(GREET)
    silent = Settings.model_validate(
        {
            "languageServers": {
                "python": {
                    "command": [sys.executable, "-c", "import time; time.sleep(60)"],
                    "extensions": [".py"],
                    "timeoutS": 60,
                }
            }
        }
    )
    ws = DiskWorkspace(tmp_path, lambda: silent)
    path = tmp_path / "greet.py"
    new = GREET.replace("def greet(name):", "def greet(who):")
    assert await reach_before(ws, path, path.as_uri(), GREET, new, timeout_s=0.5) is None
    await ws.languages.aclose()


async def test_a_server_given_up_on_while_starting_is_there_for_the_next_edit(
    tmp_path: Path,
) -> None:
    assert JEDI is not None
    (tmp_path / "greet.py").write_text(GREET)
    (tmp_path / "app.py").write_text(APP.replace("shop.greet", "greet"))
    settings = Settings.model_validate(
        {"languageServers": {"python": {"command": [JEDI], "extensions": [".py"]}}}
    )
    ws = DiskWorkspace(tmp_path, lambda: settings)
    path = tmp_path / "greet.py"
    new = GREET.replace("def greet(name):", "def greet(who):")
    # Given up on while jedi is still starting (its start takes longer). It is not cut short...
    await reach_before(ws, path, path.as_uri(), GREET, new, timeout_s=0.3)
    # ...so the next edit finds it started (a start cancelled halfway would leave it unusable).
    reach = await reach_before(ws, path, path.as_uri(), GREET, new, timeout_s=30)
    assert reach is not None and [w.path.name for w in reach.files] == ["app.py"]
    await ws.languages.aclose()
