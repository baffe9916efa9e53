"""`kill -9` of `agentls serve` at random points of a multi-step turn that does real tool work.

Each run starts a turn in a fresh session, kills the server after a random number of its events
(plus a random few milliseconds, to land inside a stream, a tool or a database write), checks a
copy of the database with PRAGMA integrity_check, starts a new server on the same data, and
checks that the session loads with every completed step, that unfinished tool calls carry an
"interrupted" result, and that the next prompt succeeds. The restarted server then hosts the
next run, so N runs cost N + 1 server starts. The random generator is seeded; a failure names
the seed and the run.
"""

from __future__ import annotations

import random
import shutil
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, Reply, reply, text, tool_use
from tests.reliability.support import FULL, Figures, Serve, integrity, runs, serve_env

SEED = 20_260_707
AGENT = {
    "model": "claude-sonnet-5-5",
    "permissions": {"*": "allow"},
    "apiRetryBaseDelayS": 0.01,
}


def prompt_of(body: dict[str, Any]) -> tuple[str, int]:
    """The last prompt's text and how many assistant messages followed it (the step)."""
    messages = body["messages"]
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] != "user":
            continue
        texts = [b["text"] for b in message["content"] if b.get("type") == "text"]
        if texts:
            steps = sum(1 for m in messages[index:] if m["role"] == "assistant")
            return texts[-1], steps
    raise AssertionError("no prompt in the request")


def steps_for(run: int) -> list[Reply]:
    name = f"run{run}.txt"
    pace: dict[str, Any] = {"chunk_size": 6, "delay_s": 0.004}
    return [
        reply(text(f"Run {run}: let me look at {name}."), tool_use("read", {"path": name}), **pace),
        reply(
            text("Now I change the counter."),
            tool_use("edit", {"path": name, "old_string": "count = 0", "new_string": "count = 1"}),
            **pace,
        ),
        reply(
            text("Running a command."),
            tool_use("bash", {"command": f"sleep 0.1; echo stepped >> run{run}.log"}),
            **pace,
        ),
        reply(
            text("Writing a file and checking the other."),
            tool_use("write", {"path": f"out{run}.txt", "content": "written\n"}),
            tool_use("read", {"path": name}),
            **pace,
        ),
        reply(text("Checking the result."), tool_use("bash", {"command": f"cat {name}"}), **pace),
        reply(text(f"Run {run} finished: the counter is 1."), **pace),
    ]


def script(body: dict[str, Any]) -> Reply:
    prompt, step = prompt_of(body)
    if prompt.startswith("after "):
        return reply(text("Back after the restart."))
    run = int(prompt.split()[1])
    planned = steps_for(run)
    return planned[step] if step < len(planned) else reply(text("(nothing more)"))


def planned_texts(run: int) -> list[str]:
    return [r.blocks[0].text for r in steps_for(run)]  # type: ignore[union-attr]


def phase_of(events: list[dict[str, Any]]) -> str:
    """Where the turn was when the kill came, from the last event the client saw."""
    if not events:
        return "before the turn started"
    last = events[-1]["type"]
    return {
        "turn-start": "starting the first step",
        "text-delta": "streaming text",
        "tool-call": "running a tool",
        "progress": "running a tool",
        "tool-result": "between a tool and the next step",
        "usage": "between a step and its tools",
        "turn-end": "after the turn ended",
    }.get(last, last)


def check_after_restart(
    server: Serve,
    session_id: str,
    seen: list[dict[str, Any]],
    run: int,
    workspace: Path,
) -> str:
    """The restarted server's view of the killed session; returns a short verdict."""
    messages = server.call("agent/getMessages", {"sessionId": session_id})["messages"]
    assert messages and messages[0]["role"] == "user"
    assert messages[0]["parts"][-1]["text"] == f"work {run}"
    parts = {
        p["callId"]: p
        for m in messages
        if m["role"] == "assistant"
        for p in m["parts"]
        if p["type"] == "tool"
    }
    results = {e["callId"]: e for e in seen if e["type"] == "tool-result"}
    calls = {e["callId"]: e for e in seen if e["type"] == "tool-call"}
    # Every call the client saw start is stored, with its input.
    for call_id, call in calls.items():
        assert call_id in parts, f"tool call {call['title']} was lost"
        assert parts[call_id]["input"] == call["input"]
    # Every result the client saw is stored as it was reported.
    for call_id, result in results.items():
        assert parts[call_id]["status"] == result["status"], (parts[call_id], result)
        assert parts[call_id].get("output", "") == result["output"]
    # Nothing is left pending or running: an unfinished call carries "interrupted".
    interrupted = 0
    for call_id, part in parts.items():
        assert part["status"] in ("completed", "error", "interrupted"), part
        if part["status"] == "interrupted":
            interrupted += 1
            assert call_id not in results, "a finished call was marked interrupted"
            assert "interrupted" in part["output"]
    # Stored texts are the planned ones (or, for the step in flight, a start of it): nothing
    # garbled, nothing twice.
    planned = planned_texts(run)
    texts = [
        "".join(p["text"] for p in m["parts"] if p["type"] == "text")
        for m in messages
        if m["role"] == "assistant"
    ]
    for index, stored in enumerate(texts):
        assert planned[index].startswith(stored), (index, stored, planned[index])
    steps_done = sum(1 for e in seen if e["type"] == "usage")
    for index in range(min(steps_done, len(texts))):
        assert texts[index] == planned[index], f"completed step {index} lost its text"
    assert len(texts) >= steps_done, "a completed step is missing"
    # A completed edit is on disk.
    edit_done = any(r["tool"] == "edit" and r["status"] == "completed" for r in results.values())
    if edit_done:
        assert (workspace / f"run{run}.txt").read_text() == "count = 1\n"
    return "interrupted call" if interrupted else "no call in flight"


class Chain:
    """Runs one after another in one workspace and data directory: each restart checks the run
    killed before it, then hosts the next one."""

    def __init__(self, index: int, root: Path, api: MessagesAPIServer) -> None:
        self.index = index
        self.rng = random.Random(SEED * 1000 + index)
        self.root = root
        self.workspace = root / "ws"
        self.workspace.mkdir(parents=True)
        self.db = root / "data" / "agentls.db"
        self.env = serve_env(root / "data", api.url)
        self.log = root / "serve.log"
        self.api = api
        self.phases: Counter[str] = Counter()
        self.attempted = 0
        self.survived = 0
        self.checks = 0

    def serve(self) -> Serve:
        server = Serve(self.workspace, self.env, stderr=self.log)
        server.initialize(AGENT)
        return server

    def run(self, count: int) -> None:
        server = self.serve()
        previous: tuple[str, list[dict[str, Any]], int] | None = None
        try:
            for run in range(count + 1):
                try:
                    if previous is not None:
                        self.attempted += 1
                        self.after_restart(server, *previous)
                        self.survived += 1
                    if run == count:
                        break
                    previous, server = self.killed_turn(server, run)
                except BaseException as exc:
                    raise AssertionError(
                        f"kill -9 chain {self.index} run {run} (seed {SEED}) failed: {exc!r}; "
                        f"server log in {self.log}"
                    ) from exc
        finally:
            server.stop()
        check, mode = integrity(self.db)
        assert check == "ok" and mode == "wal", (check, mode)
        self.checks += 1

    def killed_turn(
        self, server: Serve, run: int
    ) -> tuple[tuple[str, list[dict[str, Any]], int], Serve]:
        """Runs the turn, kills the server; returns what the client saw, and the server that
        takes over. That one starts while the turn runs (its start-up costs seconds of imports),
        but it opens the database only with its first agent/* request, after the kill."""
        (self.workspace / f"run{run}.txt").write_text("count = 0\n")
        session_id = server.call("agent/newSession", {})["sessionId"]
        first = len(server.events)
        server.start("agent/prompt", {"sessionId": session_id, "text": f"work {run}"})
        spare = Serve(self.workspace, self.env, stderr=self.log)
        starting = threading.Thread(target=spare.initialize, args=(AGENT,), daemon=True)
        starting.start()
        # Mostly at a uniformly random moment of the turn (it streams and runs tools for about
        # 0.8 s once the model answers), now and then before the model's first word.
        if self.rng.random() < 0.1:
            server.wait_events(lambda ev: len(ev) > first, timeout=60)
            time.sleep(self.rng.uniform(0, 0.5))
        else:
            server.wait_events(
                lambda ev: any(e["type"] == "text-delta" for e in ev[first:]), timeout=60
            )
            time.sleep(self.rng.uniform(0, 0.9))
        server.kill9()
        seen = [e for e in server.events[first:] if e["sessionId"] == session_id]
        self.phases[phase_of(seen)] += 1
        # Check a copy, so that the restarted server recovers the WAL by itself.
        copy = self.root / f"copy{run}"
        copy.mkdir()
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{self.db}{suffix}").exists():
                shutil.copy(f"{self.db}{suffix}", copy / f"agentls.db{suffix}")
        check, mode = integrity(copy / "agentls.db")
        assert check == "ok", check
        assert mode == "wal", mode
        self.checks += 1
        shutil.rmtree(copy)
        starting.join(60)
        assert not starting.is_alive(), "the new server did not start"
        return (session_id, seen, run), spare

    def after_restart(
        self, server: Serve, session_id: str, seen: list[dict[str, Any]], run: int
    ) -> None:
        check_after_restart(server, session_id, seen, run, self.workspace)
        result = server.call("agent/prompt", {"sessionId": session_id, "text": f"after {run}"}, 60)
        assert result["finishReason"] == "end_turn", result
        assert result["text"] == "Back after the restart."
        # A request the kill cut off half-sent arrives as broken JSON: not the history's fault.
        rejected = [r for r in self.api.all_requests if r.rejected and isinstance(r.body, dict)]
        assert not rejected, rejected[0].error


@pytest.mark.timeout(900 if FULL else 120)
def test_kill_9_at_random_points_of_a_multi_step_turn(tmp_path: Path, figures: Figures) -> None:
    total = runs(10, 50)
    # Two chains at once: most of a run is a server starting (imports), which uses one core.
    with MessagesAPIServer(default=script) as api:
        chains = [Chain(k, tmp_path / f"chain{k}", api) for k in range(2)]
        try:
            with ThreadPoolExecutor(len(chains)) as pool:
                share = [total // 2, total - total // 2]
                for future in [pool.submit(c.run, n) for c, n in zip(chains, share, strict=True)]:
                    future.result()
        finally:
            phases = sum((c.phases for c in chains), Counter[str]())
            figures.add(
                "Process: kill -9 of `agentls serve` mid-turn, restart, next prompt",
                sum(c.attempted for c in chains),
                sum(c.survived for c in chains),
                note="killed while " + ", ".join(f"{k} {v}" for k, v in sorted(phases.items())),
            )
            checks = sum(c.checks for c in chains)
            figures.add("Process: PRAGMA integrity_check after each kill (WAL)", checks, checks)
