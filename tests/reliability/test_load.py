"""Load: 20 sessions at once, each a 30-step turn (the built-in scripted model's `load` scenario:
a one-line read per step), through one `agentls serve`. All finish, no event crosses sessions,
and a prompt in a fresh session still gets its first event while the load runs. The same load
runs twice in the same process: the second run must not raise the peak RSS by more than 10%
(a leak check). Latencies are measured and reported, never asserted."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.reliability.support import FULL, Figures, Serve, serve_env

SESSIONS = 20
STEPS = 30


def expected_text(prompt: str) -> str:
    steps = "".join(f"Step {k} of {prompt}. " for k in range(1, STEPS + 1))
    return steps + f"Done with {prompt} after {STEPS} steps."


def run_load(server: Serve, label: str) -> dict[str, Any]:
    sessions = [server.call("agent/newSession", {})["sessionId"] for _ in range(SESSIONS)]
    prompts = {s: f"{label}-{i}" for i, s in enumerate(sessions)}
    started = time.monotonic()
    pending = {
        server.start("agent/prompt", {"sessionId": s, "text": prompts[s]}): s for s in sessions
    }
    # While every session is busy: a prompt in a fresh session, timed to its first events.
    server.wait_events(
        lambda ev: (
            sum(1 for e in ev if e["type"] == "tool-result" and e["sessionId"] in prompts)
            >= SESSIONS * 3
        ),
        timeout=60,
    )
    probe = server.call("agent/newSession", {})["sessionId"]
    sent = time.monotonic()
    probe_id = server.start("agent/prompt", {"sessionId": probe, "text": f"{label}-probe"})
    server.wait_events(lambda ev: any(e["sessionId"] == probe for e in ev), timeout=60)
    first_event = time.monotonic() - sent
    server.wait_events(
        lambda ev: any(e["sessionId"] == probe and e["type"] == "text-delta" for e in ev),
        timeout=60,
    )
    first_text = time.monotonic() - sent
    busy_while_probing = sum(1 for s in sessions if not server.session_events(s, "turn-end"))
    results = {s: server.answer(i, timeout=300) for i, s in pending.items()}
    elapsed = time.monotonic() - started
    probe_result = server.answer(probe_id, timeout=300)
    prompts[probe] = f"{label}-probe"
    results[probe] = probe_result
    crossed = 0
    finished = 0
    for session, response in results.items():
        result = response["result"]
        assert result["finishReason"] == "end_turn", result
        events = server.session_events(session)
        text = "".join(e["delta"] for e in events if e["type"] == "text-delta")
        # Exactly its own text, in order: nothing from another session, nothing lost.
        if text != expected_text(prompts[session]):
            crossed += 1
        calls = [e for e in events if e["type"] == "tool-call"]
        done = [e for e in events if e["type"] == "tool-result" and e["status"] == "completed"]
        if len(calls) == len(done) == STEPS and events[-1]["type"] == "turn-end":
            finished += 1
    return {
        "finished": finished,
        "crossed": crossed,
        "elapsed": elapsed,
        "first_event": first_event,
        "first_text": first_text,
        "busy_while_probing": busy_while_probing,
        "steps": (SESSIONS + 1) * STEPS,
    }


def test_twenty_sessions_of_thirty_steps_twice(tmp_path: Path, figures: Figures) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "load.txt").write_text("".join(f"line {k} of the load file\n" for k in range(40)))
    server = Serve(workspace, serve_env(tmp_path / "data", None), stderr=tmp_path / "serve.log")
    try:
        server.initialize({"model": "scripted:load"})
        server.call("agent/listSessions", {})
        first = run_load(server, "first")
        peak_first = server.peak_rss_kb()
        second = run_load(server, "second")
        peak_second = server.peak_rss_kb()
        rss_after = server.rss_kb()
    finally:
        server.stop()
    for name, run in (("first", first), ("second", second)):
        figures.add(
            f"Load: {SESSIONS} sessions x {STEPS}-step turns at once, plus a fresh session "
            "(finished, events kept apart)",
            SESSIONS + 1,
            min(run["finished"], SESSIONS + 1 - run["crossed"]),
            note=f"{name} run: {run['steps']} steps in {run['elapsed']:.1f} s",
        )
    figures.measure(
        "load: first event of a prompt in a fresh session during the load",
        f"{first['first_event'] * 1000:.0f} ms / {second['first_event'] * 1000:.0f} ms "
        f"(first text {first['first_text'] * 1000:.0f} / {second['first_text'] * 1000:.0f} ms; "
        f"{first['busy_while_probing']}/{second['busy_while_probing']} of {SESSIONS} sessions "
        "still running)",
    )
    growth = (peak_second - peak_first) / peak_first
    figures.measure(
        "load: server peak RSS (VmHWM) after the first and the second run",
        f"{peak_first / 1024:.1f} MB / {peak_second / 1024:.1f} MB ({growth:+.1%}; "
        f"RSS at the end {rss_after / 1024:.1f} MB){' [full mode]' if FULL else ''}",
    )
    for run in (first, second):
        assert run["finished"] == SESSIONS + 1 and run["crossed"] == 0, run
    assert peak_second <= peak_first * 1.10, (peak_first, peak_second)
