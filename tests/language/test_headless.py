"""HeadlessLanguages with the real jedi-language-server: started on first use, documents synced
from the workspace's text, pushed diagnostics, clear errors (none configured, a server that
dies or never answers), one restart after a crash, and nothing left running after aclose()."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.config import Settings
from agentls.language import NoLanguages
from agentls.language.headless import HeadlessLanguages
from agentls.verify.workspace import DiskWorkspace
from agentls.workspace.protocol import LanguageUnavailable
from tests.language.conftest import jedi_settings, make_project


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def references(path: Path, line: int, character: int) -> dict[str, Any]:
    return {
        "textDocument": {"uri": path.as_uri()},
        "position": {"line": line, "character": character},
        "context": {"includeDeclaration": True},
    }


def places(result: Any) -> list[tuple[str, int]]:
    return sorted(
        (item["uri"].rsplit("/", 1)[1], item["range"]["start"]["line"]) for item in result
    )


async def test_references_across_files_and_the_server_stops_with_aclose(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws")
    ws = DiskWorkspace(root, jedi_settings)
    languages = ws.languages
    assert isinstance(languages, HeadlessLanguages)
    greet = root / "shop" / "greet.py"
    assert "textDocument/references" in languages.methods(greet)
    assert languages.methods(root / "notes.txt") == frozenset()
    try:
        result = await languages.request("textDocument/references", references(greet, 3, 4), greet)
        # Not the comment or the string in app.py: the language's own idea of a use.
        assert places(result) == [
            ("app.py", 0),
            ("app.py", 4),
            ("app.py", 6),
            ("greet.py", 3),
            ("greet.py", 9),
        ]
        pids = languages.pids()
        assert len(pids) == 1 and alive(pids[0])
        # What the server offers is known once it started.
        assert "textDocument/rename" in languages.methods(greet)
    finally:
        await languages.aclose()
    assert not alive(pids[0])
    with pytest.raises(LanguageUnavailable, match="stopped"):
        await languages.request("textDocument/references", references(greet, 3, 4), greet)


async def test_a_changed_file_is_synced_and_diagnostics_are_collected(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws")
    ws = DiskWorkspace(root, jedi_settings)
    languages = ws.languages
    assert isinstance(languages, HeadlessLanguages)
    app = root / "app.py"
    try:
        first = await languages.request(
            "textDocument/diagnostic", {"textDocument": {"uri": app.as_uri()}}, app
        )
        assert first == {"kind": "full", "items": []}
        app.write_text(app.read_text() + "\ndef broken(:\n")
        report = await languages.request(
            "textDocument/diagnostic", {"textDocument": {"uri": app.as_uri()}}, app
        )
        assert report["items"] and report["items"][0]["range"]["start"]["line"] == 8
        assert languages.diagnostics(app) == report["items"]
        # The symbols come from the new text too.
        symbols = await languages.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": app.as_uri()}}, app
        )
        assert "broken" in {s["name"] for s in symbols} or symbols is not None
    finally:
        await languages.aclose()


async def test_no_server_configured_says_so(tmp_path: Path) -> None:
    assert isinstance(DiskWorkspace(tmp_path).languages, NoLanguages)
    with pytest.raises(LanguageUnavailable, match="languageServers"):
        await NoLanguages().request("textDocument/hover", {}, tmp_path / "a.py")
    languages = HeadlessLanguages(tmp_path, jedi_settings, DiskWorkspace(tmp_path).read_text)
    with pytest.raises(
        LanguageUnavailable, match=r"no language server for \.rs files.*python \(\.py\)"
    ):
        await languages.request("textDocument/hover", {}, tmp_path / "main.rs")
    empty = HeadlessLanguages(tmp_path, Settings, DiskWorkspace(tmp_path).read_text)
    with pytest.raises(LanguageUnavailable, match="names none"):
        await empty.request("workspace/symbol", {"query": "x"}, None)
    assert languages.pids() == []


def script_server(code: str, **extra: Any) -> Settings:
    return Settings.model_validate(
        {
            "languageServers": {
                "python": {"command": [sys.executable, "-c", code], "extensions": [".py"], **extra}
            }
        }
    )


async def test_a_server_that_exits_or_never_answers_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    read = DiskWorkspace(tmp_path).read_text
    dying = HeadlessLanguages(
        tmp_path,
        lambda: script_server("import sys; sys.stderr.write('no config here'); sys.exit(3)"),
        read,
    )
    with pytest.raises(LanguageUnavailable, match="exited with code 3.*no config here|stopped"):
        await dying.request("textDocument/hover", {}, tmp_path / "a.py")
    await dying.aclose()

    silent = HeadlessLanguages(
        tmp_path, lambda: script_server("import time; time.sleep(60)", timeoutS=0.5), read
    )
    with pytest.raises(LanguageUnavailable, match=r"did not answer initialize within 0.5 s"):
        await silent.request("textDocument/hover", {}, tmp_path / "a.py")
    await silent.aclose()
    assert silent.pids() == []

    missing = HeadlessLanguages(
        tmp_path,
        lambda: Settings.model_validate(
            {"languageServers": {"python": {"command": ["no-such-ls-x"], "extensions": [".py"]}}}
        ),
        read,
    )
    with pytest.raises(LanguageUnavailable, match="could not be started"):
        await missing.request("textDocument/hover", {}, tmp_path / "a.py")


async def test_a_crashed_server_is_restarted_once(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws")
    languages = HeadlessLanguages(root, jedi_settings, DiskWorkspace(root).read_text)
    greet = root / "shop" / "greet.py"
    hover = {"textDocument": {"uri": greet.as_uri()}, "position": {"line": 3, "character": 4}}
    try:
        assert await languages.request("textDocument/hover", hover, greet)
        first = languages.pids()[0]
        os.kill(first, signal.SIGKILL)
        while alive(first):
            await asyncio.sleep(0.02)
        assert await languages.request("textDocument/hover", hover, greet)  # restarted
        second = languages.pids()[0]
        assert second != first
        os.kill(second, signal.SIGKILL)
        while alive(second):
            await asyncio.sleep(0.02)
        with pytest.raises(LanguageUnavailable, match="not restarted a second time"):
            await languages.request("textDocument/hover", hover, greet)
    finally:
        await languages.aclose()


async def test_a_start_cut_short_by_a_cancel_leaves_nothing_half_started(tmp_path: Path) -> None:
    root = make_project(tmp_path / "ws")
    languages = HeadlessLanguages(root, jedi_settings, DiskWorkspace(root).read_text)
    greet = root / "shop" / "greet.py"
    hover = {"textDocument": {"uri": greet.as_uri()}, "position": {"line": 3, "character": 4}}
    try:
        # Cancelled while the server is still starting (a cancelled turn).
        first = asyncio.ensure_future(languages.request("textDocument/hover", hover, greet))
        while not languages.pids():
            await asyncio.sleep(0.005)
        started = languages.pids()[0]
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert languages.pids() == [] and not alive(started)
        # The next request starts a server afresh and gets an answer, twice over (the cancelled
        # start does not count as one of the restarts a crash is allowed).
        assert await languages.request("textDocument/hover", hover, greet)
        assert await languages.request("textDocument/hover", hover, greet)
    finally:
        await languages.aclose()
