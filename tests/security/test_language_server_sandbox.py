"""A headless language server (the `languageServers` setting, under `agentls run` and ACP) runs
in the bash sandbox with the workspace read-only: a hostile or compromised server reads the
workspace and answers, but cannot write the workspace, read the user's secrets in $HOME, or reach
the network."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.language.errors import LanguageUnavailable
from agentls.language.headless import HeadlessLanguages, use_launcher
from agentls.tools.support.sandbox import language_server_prefix
from tests.security.conftest import SecurityFigures
from tests.security.sandbox_support import outside_dir, require_bwrap

KIND = "language server escape"
FAKE_SERVER = Path(__file__).with_name("fake_language_server.py")


@pytest.fixture(autouse=True)
def _sandboxed_servers() -> Iterator[None]:
    require_bwrap()
    use_launcher(language_server_prefix)
    yield
    use_launcher(None)


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    base = outside_dir("ls-home")
    (base / ".ssh").mkdir(parents=True)
    (base / ".ssh" / "id_rsa").write_text("SECRET-SSH-KEY\n")
    (base / ".env.local").write_text("SECRET-ENV\n")
    monkeypatch.setenv("HOME", str(base))
    yield base
    import shutil

    shutil.rmtree(base, ignore_errors=True)


def _languages(root: Path, before: str, mode: str = "required") -> HeadlessLanguages:
    (root / "answers.json").write_text(json.dumps({"textDocument/hover": {"contents": "a hover"}}))
    script = f'{before}; exec "$0" "$@"'
    command = ["sh", "-c", script, sys.executable, str(FAKE_SERVER), str(root / "answers.json")]
    settings = Settings.model_validate(
        {
            "sandbox": mode,
            "languageServers": {"python": {"command": command, "extensions": [".py"]}},
        }
    )

    async def read_text(path: Path) -> str:
        return path.read_text()

    return HeadlessLanguages(root, lambda: settings, read_text)


def _hover(root: Path) -> dict[str, object]:
    return {
        "textDocument": {"uri": (root / "a.py").as_uri()},
        "position": {"line": 0, "character": 0},
    }


ATTACKS = [
    "echo planted > planted.txt",
    "mkdir -p .git/hooks && echo x > .git/hooks/pre-commit",
    "cat $HOME/.ssh/id_rsa >&2; cat $HOME/.env.local >&2",
]


@pytest.mark.parametrize("attack", ATTACKS)
async def test_a_hostile_language_server_is_confined(
    attack: str, tmp_path: Path, home: Path, security_figures: SecurityFigures
) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    languages = _languages(root, attack + " 2>/dev/null || true")
    with security_figures.attempt(KIND):
        try:
            answer = await languages.request("textDocument/hover", _hover(root), root / "a.py")
            assert answer == {"contents": "a hover"}  # it still works
            said = " ".join(languages._servers["python"]._stderr)
        finally:
            await languages.aclose()
        assert not (root / "planted.txt").exists()
        assert not (root / ".git").exists()
        assert "SECRET" not in said, said


async def test_a_language_server_has_no_network(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    connect = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\""
    languages = _languages(root, connect + " 2>/dev/null || true")
    with security_figures.attempt(KIND):
        try:
            await languages.request("textDocument/hover", _hover(root), root / "a.py")
        finally:
            await languages.aclose()
        with pytest.raises(TimeoutError):
            listener.accept()
    listener.close()


async def test_required_sandbox_without_bwrap_does_not_start_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    languages = _languages(root, "true")
    try:
        with pytest.raises(LanguageUnavailable, match="sandbox"):
            await languages.request("textDocument/hover", _hover(root), root / "a.py")
    finally:
        await languages.aclose()
