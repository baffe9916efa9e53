"""Small helpers the attack corpora share: a Messages API request's tool results, a hostile
language server (tests/security/fake_language_server.py) that answers what the test says, and the
files a hostile server's edit must never reach (EditTargets)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def results_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results of a Messages API request's last message."""
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


FAKE_SERVER = Path(__file__).with_name("fake_language_server.py")


class FakeServer:
    """tests/security/fake_language_server.py with its answers in a JSON file."""

    def __init__(self, tmp_path: Path) -> None:
        self.file = tmp_path / "answers.json"
        self.answer({})

    def answer(self, answers: dict[str, Any]) -> None:
        self.file.write_text(json.dumps(answers))

    def settings(self, permissions: dict[str, Any]) -> dict[str, Any]:
        command = [sys.executable, str(FAKE_SERVER), str(self.file)]
        return {
            "permissions": permissions,
            "approvalTimeoutS": 0.5,
            "languageServers": {"python": {"command": command, "extensions": [".py"]}},
        }


def text_edit(line: int, start: int, end: int, new_text: str) -> dict[str, Any]:
    return {
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": end},
        },
        "newText": new_text,
    }


@dataclass
class EditTargets:
    """A workspace (root) whose protected, secret and unread files, a file outside it and a link
    out of it a language server's edit aims at, `targets` naming each by its URI; app.py is the
    file the edit is asked for."""

    root: Path
    outside: Path
    files: dict[str, str]
    targets: dict[str, str]

    def untouched(self, what: str) -> None:
        """Every one of those files as it was (`what`: the attack, for the failure message)."""
        for name, content in self.files.items():
            assert (self.root / name).read_text() == content, (what, name)
        assert (self.outside / "victim.py").read_text() == "VICTIM = 1\n", what


def edit_targets(root: Path, tmp_path: Path) -> EditTargets:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.py").write_text("VICTIM = 1\n")
    (root / ".git").mkdir()
    (root / ".agentls").mkdir()
    files = {
        ".git/config": "[core]\n",
        ".agentls/config.json": "{}\n",
        ".env": "TOKEN=abc\n",
        "other.py": "OTHER = 1\n",
        "app.py": "def f():\n    return 1\n",
    }
    for name, content in files.items():
        (root / name).write_text(content)
    (root / "link.py").symlink_to(outside / "victim.py")
    targets = {
        ".git/config": (root / ".git" / "config").as_uri(),
        ".agentls/config.json": (root / ".agentls" / "config.json").as_uri(),
        ".env": (root / ".env").as_uri(),
        "other.py (not read)": (root / "other.py").as_uri(),
        "outside": (outside / "victim.py").as_uri(),
        "a symlink out": (root / "link.py").as_uri(),
        "a path with ..": root.as_uri() + "/../outside/victim.py",
    }
    return EditTargets(root, outside, files, targets)
