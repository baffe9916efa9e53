"""The security suite: hostile command lines, paths, grants, repositories and faults. Each test adds
what it tried and what got through to one table, printed at the end of the run (and written as JSON
to $AGENTLS_SECURITY_REPORT when set). README's "Security" figures come from that table."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.figures import in_one_process


@dataclass
class Row:
    what: str
    tried: int = 0
    got_through: int = 0


class SecurityFigures:
    """Per kind of attack: how many were tried and how many got through (a test that lets one
    through also fails, so a green run shows 0 in that column)."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self._lock = threading.Lock()

    def row(self, what: str) -> Row:
        with self._lock:
            return self.rows.setdefault(what, Row(what))

    @contextmanager
    def attempt(self, what: str) -> Iterator[None]:
        """One attempt: it got through when the block raises (its assertion failed)."""
        row = self.row(what)
        with self._lock:
            row.tried += 1
        try:
            yield
        except BaseException:
            with self._lock:
                row.got_through += 1
            raise

    def table(self) -> str:
        lines = ["security figures", "| tried | times | got through |", "|---|---:|---:|"]
        for row in sorted(self.rows.values(), key=lambda r: r.what):
            lines.append(f"| {row.what} | {row.tried} | {row.got_through} |")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"rows": [vars(r) for r in self.rows.values()]}


FIGURES = SecurityFigures()


@pytest.fixture(scope="session")
def security_figures() -> SecurityFigures:
    return FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # Under pytest-xdist a worker's counts are only a part: the controller prints the sums
    # (tests/figures.py).
    if in_one_process(terminalreporter.config):
        print_figures(terminalreporter)


def print_figures(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES.rows:
        return
    terminalreporter.write_line("")
    for line in FIGURES.table().splitlines():
        terminalreporter.write_line(line)
    report = os.environ.get("AGENTLS_SECURITY_REPORT")
    if report:
        Path(report).write_text(json.dumps(FIGURES.to_json(), indent=1) + "\n")
