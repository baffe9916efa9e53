"""The benchmarks of issue 22 run, at tiny sizes: bench/first_token.py, bench/long_session.py and
bench/peers.py (agentls alone: the peers need an npm install). No time is asserted; what is
checked is what each benchmark checks of itself (the answers shown, the edits made, the module as
edited on disk and in the editor's buffer) and the figures it reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import common, first_token, long_session, peers
from bench.common import BenchResult


@pytest.fixture(autouse=True)
def no_quiet_wait(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No waiting for idle cores in a test; results written under tmp_path."""
    monkeypatch.setattr(common, "QUIET_MAX_WAIT_S", 0.0)
    monkeypatch.setattr(common, "RESULTS", tmp_path / "results")
    monkeypatch.setenv("BENCH_RUNS", "1")


def figures(result: BenchResult) -> dict[str, Any]:
    return {f.name: f for f in result.figures}


def test_first_token_runs_through_serve_and_the_cli() -> None:
    result = BenchResult("first_token")
    first_token.run(result)
    found = figures(result)
    assert len(found) == 3
    for name in ("serve", "run_warm", "run_whole"):
        split = result.details[name]
        # Every sample splits into before + the API's TTFB + after, all of them measured.
        assert split["api_ttfb_ms"]["median"] >= 0
        assert split["before_ms"]["median"] > 0
        assert split["after_ms"]["median"] > 0
    assert result.details["run_whole_imports_ms"] > 0
    assert set(result.details["baselines_ms"]) == {"python_ms", "sdk_import_ms"}


def test_long_session_samples_rss_and_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(long_session, "SAMPLE_EVERY", 20)
    monkeypatch.setattr(long_session, "FLAT_FROM", 40)
    result = BenchResult("long_session")
    long_session.run(result, steps=60)
    details = result.details
    assert details["steps"] >= 60
    assert details["compactions"] >= 1  # the small window compacts, as a long session does
    at = [step for step, _ in details["rss_mib_by_step"]]
    assert at[0] == 0 and len(at) == 4  # the start, then every 20 steps
    assert all(mib > 0 for _, mib in details["rss_mib_by_step"])
    assert "long session: RSS growth after step 40" in figures(result)


def test_peers_answers_each_agent_in_its_own_tool_shape(tmp_path: Path) -> None:
    answers = peers.Answers("steps50", tmp_path)
    claude = {"tools": [{"name": "Read"}, {"name": "Edit"}], "messages": [{"role": "user"}]}
    read = answers(claude).blocks[0]
    assert (read.name, read.input) == ("Read", {"file_path": str(tmp_path / "module.py")})
    opencode = {
        "tools": [{"name": "read", "input_schema": {"properties": {"filePath": {}}}}],
        "messages": [{"role": "user"}, {"role": "assistant"}, {"role": "user"}],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    thought, edit = answers(opencode).blocks
    assert thought.__class__.__name__ == "Thinking"  # thinking on: the answer starts with it
    assert edit.name == "edit" and set(edit.input) == {"filePath", "oldString", "newString"}
    assert answers({"messages": [{"role": "user"}]}).blocks[0].text == "Benchmark."
    assert (answers.steps, answers.side) == (2, 1)


def test_peers_runs_agentls_side_by_side(tmp_path: Path) -> None:
    code = peers.main(
        ["--peers", str(tmp_path), "--agents", "agentls", "--runs", "1", "--scenarios", "steps50"]
    )
    assert code == 0
