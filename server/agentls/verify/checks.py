"""agentls' own checks, which need no editor: Python syntax (compile) and JSON syntax."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# The source of the diagnostics these checks make.
SOURCE = "agentls"
PYTHON_SUFFIXES = (".py", ".pyi")
JSON_SUFFIXES = (".json",)


def has_own_checks(path: Path) -> bool:
    """Whether own_checks checks anything in a file of this name."""
    return path.suffix.lower() in PYTHON_SUFFIXES + JSON_SUFFIXES


def own_checks(path: Path, text: str) -> list[dict[str, Any]]:
    """The problems agentls finds itself in a file's text, as LSP diagnostics (plain JSON objects):
    a Python syntax error, a JSON syntax error; none for other files."""
    suffix = path.suffix.lower()
    if suffix in PYTHON_SUFFIXES:
        try:
            compile(text, str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:
            line = max((exc.lineno or 1) - 1, 0)
            col = max((exc.offset or 1) - 1, 0)
            return [diagnostic(line, col, f"SyntaxError: {exc.msg}")]
        except ValueError as exc:  # e.g. null bytes
            return [diagnostic(0, 0, str(exc))]
    elif suffix in JSON_SUFFIXES:
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return [diagnostic(exc.lineno - 1, exc.colno - 1, f"JSON: {exc.msg}")]
    return []


def diagnostic(line: int, col: int, message: str, source: str = SOURCE) -> dict[str, Any]:
    """An error diagnostic (LSP's shape, as JSON) one character wide at a 0-based line and column."""
    return {
        "range": {
            "start": {"line": line, "character": col},
            "end": {"line": line, "character": col + 1},
        },
        "severity": 1,
        "source": source,
        "message": message,
    }
