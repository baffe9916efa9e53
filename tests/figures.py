"""The figures tables (tests/security/ and tests/reliability/) when pytest-xdist runs the suite in
workers (`make pytest`): each worker counts what its tests tried, hands its counts back when it
ends, and the controller adds them up and prints each table once, as a run in one process does.

The controller collects no tests, so it never loads the suites' conftests as plugins: their
figures and table printers are imported here as plain modules."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest

# The module holding each suite's FIGURES, and the conftest printing its table.
SUITES = {
    "security": ("tests.security.conftest", "tests.security.conftest"),
    "reliability": ("tests.reliability.support", "tests.reliability.conftest"),
}


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def is_controller(config: pytest.Config) -> bool:
    """Whether this process hands the tests to xdist workers (and so runs none itself)."""
    return config.pluginmanager.has_plugin("dsession")


def in_one_process(config: pytest.Config) -> bool:
    """Whether this process runs every test itself (no xdist workers): it prints its own tables."""
    return not is_worker(config) and not is_controller(config)


def worker_counts() -> dict[str, Any]:
    """What this worker's tests counted, by suite (only the suites it ran tests of)."""
    counts: dict[str, Any] = {}
    for suite, (figures_module, _) in SUITES.items():
        module = sys.modules.get(figures_module)
        if module is not None:
            counts[suite] = module.FIGURES.to_json()
    return counts


def add_worker_counts(counts: dict[str, Any]) -> None:
    """Adds one worker's counts to this process's tables."""
    for suite, table in counts.items():
        figures = importlib.import_module(SUITES[suite][0]).FIGURES
        for row in table["rows"]:
            mine = figures.row(row["what"])
            for key, value in row.items():
                if key == "what":
                    continue
                setattr(mine, key, getattr(mine, key) + value)
        if "measures" in table:
            figures.measures.update(table["measures"])


def print_tables(terminalreporter: pytest.TerminalReporter) -> None:
    """Each suite's table, as its conftest prints it at the end of a run in one process."""
    for _, printer in SUITES.values():
        importlib.import_module(printer).print_figures(terminalreporter)
