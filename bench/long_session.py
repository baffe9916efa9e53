"""long_session: 2,000 steps in one session through one `agentls serve`, driven by bench/editor.py's
editor-like client (versioned buffers, each workspace/applyEdit applied and saved, a diagnostics
push 50 ms after each change, as a language server behind the editor would).

Each turn is 4 rounds of (read the module, edit one function) and an answer: 9 steps. The
session's context is kept bounded as a real long session's is, by compaction: a small context
window (`contextWindow`) makes the session summarize its older history every few turns (the
summary requests are answered too, and are not counted as steps). The local Messages-API server
runs in this process and answers each request from what it asks (a summary request gets a
summary, a turn's next step its next call), so compactions can come at any step.

With BENCH_TRACEMALLOC=1 the server traces its allocations (tracemalloc, one frame; slower) and
writes a snapshot at each sample; what grew between the sample at step 200 and the last is
printed, by line of the allocating code.

Measured: the server's RSS (/proc/PID/status) every 100 steps and the time per step (a turn's
wall over its steps) in each window of 100. Targets: RSS within 10% of its value at step 200
from there on; per-step time flat (the last windows against the first after step 200).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import (
    AGENTLS,
    MODEL,
    BenchResult,
    Figure,
    child_env,
    log,
    median,
    proc_rss_kib,
    summary,
    temp_dir,
)
from bench.editor import PROFILES, EditorClient
from messages_api import MessagesAPIServer, reply, text, tool_use

MODULE = "module.py"
FUNCTIONS = 20
ROUNDS = 4  # read + edit rounds per turn
STEPS_PER_TURN = 2 * ROUNDS + 1
SAMPLE_EVERY = 100
FLAT_FROM = 200
OPTIONS = {
    "model": MODEL,
    "permissions": {"*": "allow"},
    # Compaction every few turns, as a long session's context reaches its window.
    "contextWindow": 30_000,
    "compactThreshold": 0.6,
    "compactKeepRecentTokens": 4_000,
}
# Loaded by the server's interpreter (as sitecustomize) with BENCH_TRACEMALLOC=1: a snapshot of
# its traced allocations written on SIGUSR1, numbered.
TRACER = """
import os, signal, tracemalloc
tracemalloc.start(1)
_count = [0]
def _dump(signum, frame):
    _count[0] += 1
    path = os.path.join(os.environ["BENCH_SNAPSHOTS"], "snap-%04d" % _count[0])
    tracemalloc.take_snapshot().dump(path + ".tmp")
    os.rename(path + ".tmp", path)
signal.signal(signal.SIGUSR1, _dump)
"""


def module_text(scales: list[int]) -> str:
    out = ['"""Twenty small functions (generated for the agentls benchmark)."""', ""]
    for k, scale in enumerate(scales):
        out += ["", *_function(k, scale).splitlines()]
    return "\n".join(out) + "\n"


def _function(k: int, scale: int) -> str:
    return f"def fn_{k:02d}(values):\n    total = 0\n    for v in values:\n        total += v * {scale}\n"


class Script:
    """The model: answers each request from what it asks. Requests come one at a time."""

    def __init__(self) -> None:
        self.scales = list(range(FUNCTIONS))
        self.edits = 0
        self.step_in_turn = 0
        self.steps = 0
        self.summaries = 0
        self.lock = threading.Lock()

    def new_turn(self) -> None:
        self.step_in_turn = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        with self.lock:
            system = body.get("system")
            if "summarize" in str(system)[:400].lower():
                self.summaries += 1
                return reply(text("The session so far: functions of module.py were rescaled."))
            self.steps += 1
            k = self.step_in_turn
            self.step_in_turn += 1
            if k >= 2 * ROUNDS:
                return reply(text(f"Done: {ROUNDS} functions rescaled."))
            if k % 2 == 0:
                return reply(tool_use("read", {"path": MODULE}))
            f = self.edits % FUNCTIONS
            self.edits += 1
            old = _function(f, self.scales[f])
            self.scales[f] += 1
            new = _function(f, self.scales[f])
            return reply(tool_use("edit", {"path": MODULE, "old_string": old, "new_string": new}))


async def _session(tmp: Path, api: MessagesAPIServer, script: Script, steps: int) -> dict[str, Any]:
    ws = tmp / "ws"
    ws.mkdir()
    (ws / MODULE).write_text(module_text(script.scales))
    env = child_env(tmp, api.url)
    snapshots: list[tuple[int, Path]] = []
    if os.environ.get("BENCH_TRACEMALLOC"):
        (tmp / "tracer").mkdir()
        (tmp / "tracer" / "sitecustomize.py").write_text(TRACER)
        env.update(PYTHONPATH=str(tmp / "tracer"), BENCH_SNAPSHOTS=str(tmp))
    client = await EditorClient.spawn(
        [AGENTLS, "serve"], env, str(ws), stderr_path=tmp / "serve.err"
    )
    assert isinstance(client, EditorClient)
    client.profile = next(p for p in PROFILES if p.name == "50ms")
    pid = client.proc.pid
    rss: list[tuple[int, float]] = []  # (steps done, MiB)
    turns: list[tuple[int, float, int]] = []  # (steps before, wall s, steps in the turn)
    errors = 0
    try:
        await client.initialize(str(ws), {"agent": OPTIONS}, client.capabilities())
        client.open(ws / MODULE)
        session = (await client.request("agent/newSession", {}))["sessionId"]

        def on_note(note: Any) -> None:
            nonlocal errors
            params = note.params or {}
            if params.get("type") == "tool-result" and params.get("isError"):
                errors += 1
                log(f"tool error: {params.get('output', '')[:300]}")

        client.on_notification = on_note
        rss.append((0, proc_rss_kib(pid) / 1024))
        next_sample = SAMPLE_EVERY
        while script.steps < steps:
            before = script.steps
            script.new_turn()
            started = time.perf_counter()
            result = await client.request(
                "agent/prompt",
                {"sessionId": session, "text": f"Rescale the next {ROUNDS} functions."},
                timeout=300,
            )
            wall = time.perf_counter() - started
            if result.get("finishReason") != "end_turn":
                raise RuntimeError(f"long_session: the turn ended with {result!r:.300}")
            turns.append((before, wall, script.steps - before))
            api.clear()  # the recorded bodies are this process's memory, not the server's
            client.notifications.clear()
            if script.steps >= next_sample:
                rss.append((script.steps, proc_rss_kib(pid) / 1024))
                if "BENCH_SNAPSHOTS" in env:
                    snapshots.append((script.steps, await _snapshot(tmp, pid, len(snapshots))))
                log(f"{script.steps} steps: RSS {rss[-1][1]:.1f} MiB, "
                    f"{script.summaries} compactions, last turn {wall:.2f} s")  # fmt: skip
                next_sample += SAMPLE_EVERY
        text_now = (ws / MODULE).read_text()
        if text_now != module_text(script.scales) or errors:
            raise RuntimeError(f"long_session: the module is not as edited ({errors} tool errors)")
        buffer = client.buffers["file://" + str(ws / MODULE)]
        if buffer.text != text_now:
            raise RuntimeError("long_session: the buffer and the disk differ")
    finally:
        await client.close()
    return {"rss": rss, "turns": turns, "grown": _grown(snapshots)}


async def _snapshot(tmp: Path, pid: int, taken: int) -> Path:
    path = tmp / f"snap-{taken + 1:04d}"
    os.kill(pid, signal.SIGUSR1)
    for _ in range(1200):  # the server writes it between two of its steps
        if path.exists():
            return path
        await asyncio.sleep(0.05)
    raise RuntimeError(f"long_session: no tracemalloc snapshot {path.name} in 60 s")


def _grown(snapshots: list[tuple[int, Path]]) -> list[str]:
    """What grew from the first snapshot at or after FLAT_FROM to the last, by line."""
    import tracemalloc

    after = [(at, path) for at, path in snapshots if at >= FLAT_FROM]
    if len(after) < 2:
        return []
    (a_at, a), (b_at, b) = after[0], after[-1]
    first, last = tracemalloc.Snapshot.load(str(a)), tracemalloc.Snapshot.load(str(b))
    stats = last.compare_to(first, "lineno")
    top = [f"steps {a_at} -> {b_at}: {sum(s.size_diff for s in stats) / 1024:+.0f} KiB traced"]
    top += [str(s) for s in stats[:15]]
    for line in top:
        log(line)
    return top


def run(result: BenchResult, steps: int | None = None) -> None:
    steps = steps or int(os.environ.get("BENCH_STEPS", 2000))
    script = Script()
    with temp_dir("long") as tmp, MessagesAPIServer(default=script) as api:
        data = asyncio.run(_session(tmp, api, script, steps))
    rss: list[tuple[int, float]] = data["rss"]
    turns: list[tuple[int, float, int]] = data["turns"]
    # Per-step time in each window of SAMPLE_EVERY steps (turns by the step they started at).
    windows: dict[int, list[tuple[float, int]]] = {}
    for before, wall, n in turns:
        windows.setdefault(before // SAMPLE_EVERY, []).append((wall, n))
    per_step = {
        (w + 1) * SAMPLE_EVERY: 1000 * sum(t for t, _ in rows) / sum(n for _, n in rows)
        for w, rows in sorted(windows.items())
    }
    base = [mib for at, mib in rss if at >= FLAT_FROM]
    base_at = next((mib for at, mib in rss if at >= FLAT_FROM), None)
    if base_at is not None:
        growth = (max(base) - base_at) / base_at
        result.add(
            Figure(
                f"long session: RSS growth after step {FLAT_FROM}",
                round(100 * growth, 2),
                "%",
                target="<= 10 %",
                met=growth <= 0.10,
                note=f"RSS at step {FLAT_FROM} {base_at:.1f} MiB, highest after "
                f"{max(base):.1f} MiB, at the end {rss[-1][1]:.1f} MiB (at the start "
                f"{rss[0][1]:.1f} MiB); {script.summaries} compactions in {script.steps} steps",
            )
        )
    later = [ms for at, ms in per_step.items() if at > FLAT_FROM]
    if len(later) >= 4:
        head, tail = median(later[:3]), median(later[-3:])
        result.add(
            Figure(
                "long session: time per step, last 300 against the first 300 after step 200",
                round(tail / head, 3),
                "x",
                target="flat (about 1x)",
                note=f"{head:.1f} ms a step then, {tail:.1f} ms at the end (windows of "
                f"{SAMPLE_EVERY} steps, turns of {STEPS_PER_TURN} steps with a 50 ms "
                "diagnostics push after each edit)",
            )
        )
    result.details = {
        "steps": script.steps,
        "compactions": script.summaries,
        "rss_mib_by_step": [[at, round(mib, 1)] for at, mib in rss],
        "ms_per_step_by_window": {at: round(ms, 2) for at, ms in per_step.items()},
        "turn_s": summary([t for _, t, _ in turns], 3),
        "tracemalloc_grown": data["grown"],
    }
    result.rounds = 1
