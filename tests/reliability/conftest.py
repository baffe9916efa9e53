"""The fault and abuse suite: quick in `make test`, heavy with AGENTLS_RELIABILITY=full
(`make reliability-full`). Each test adds its counts to one table, printed at the end."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.figures import in_one_process
from tests.reliability.support import FIGURES, Figures


@pytest.fixture(scope="session")
def figures() -> Figures:
    return FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # Under pytest-xdist a worker's counts are only a part: the controller prints the sums
    # (tests/figures.py).
    if in_one_process(terminalreporter.config):
        print_figures(terminalreporter)


def print_figures(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES.rows and not FIGURES.measures:
        return
    terminalreporter.write_line("")
    for line in FIGURES.table().splitlines():
        terminalreporter.write_line(line)
    report = os.environ.get("AGENTLS_RELIABILITY_REPORT")
    if report:
        Path(report).write_text(json.dumps(FIGURES.to_json(), indent=1) + "\n")
