"""A language server's command run headless (language/commands.py) with ruff's real server: the
edits it sends back with workspace/applyEdit are captured and returned, the file left as it was;
a command the server does not offer, one known to write files itself, and any command of a
server outside the read-only sandbox are refused before they run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.language.edits import apply_text_edits, edits_by_file
from agentls.language.errors import LanguageUnavailable
from agentls.language.headless import HeadlessLanguages, use_launcher
from agentls.tools.support.sandbox import language_server_prefix
from tests.security.sandbox_support import require_bwrap
from tests.tools.code_action_support import SORTED, UNSORTED, ruff_servers

EXECUTE = "workspace/executeCommand"


@pytest.fixture
def sandboxed() -> Iterator[None]:
    """Headless servers started in the sandbox, as the Agent has them (session/agent.py)."""
    require_bwrap()
    use_launcher(language_server_prefix)
    yield
    use_launcher(None)


async def _read(path: Path) -> str:
    return path.read_text()


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[tuple[HeadlessLanguages, Path]]:
    (tmp_path / "app.py").write_text(UNSORTED)
    settings = Settings.model_validate({"sandbox": "auto", "languageServers": ruff_servers()})
    languages = HeadlessLanguages(tmp_path, lambda: settings, _read)
    yield languages, (tmp_path / "app.py").resolve()
    await languages.aclose()


def organize(path: Path) -> dict[str, object]:
    return {
        "command": "ruff.applyOrganizeImports",
        "arguments": [{"uri": path.as_uri(), "version": 1}],
    }


async def test_a_commands_edits_are_captured_and_not_applied(
    sandboxed: None, app: tuple[HeadlessLanguages, Path]
) -> None:
    languages, path = app
    answer = await languages.request(EXECUTE, organize(path), path)
    [edit] = answer["edits"]
    [(edited, edits)] = edits_by_file(edit).items()
    assert edited == path and apply_text_edits(UNSORTED, edits) == SORTED
    assert path.read_text() == UNSORTED  # captured, never written


async def test_commands_not_offered_or_writing_files_are_refused(
    sandboxed: None, app: tuple[HeadlessLanguages, Path]
) -> None:
    languages, path = app
    with pytest.raises(LanguageUnavailable, match="does not offer the command ruff.nothing"):
        await languages.request(EXECUTE, {"command": "ruff.nothing"}, path)
    with pytest.raises(LanguageUnavailable, match="pyright.createtypestub does something itself"):
        await languages.request(EXECUTE, {"command": "pyright.createtypestub"}, path)
    assert path.read_text() == UNSORTED


async def test_a_server_outside_the_sandbox_runs_no_command(
    app: tuple[HeadlessLanguages, Path],
) -> None:
    languages, path = app  # no launcher: the server runs as it is
    with pytest.raises(LanguageUnavailable, match="runs outside the sandbox"):
        await languages.request(EXECUTE, organize(path), path)
    assert path.read_text() == UNSORTED
