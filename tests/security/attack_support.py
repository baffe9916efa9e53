"""Small helpers the attack corpora share: a Messages API request's tool results, and a hostile
language server (tests/security/fake_language_server.py) that answers what the test says."""

from __future__ import annotations

import json
import sys
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
