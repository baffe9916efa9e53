"""stream: one answer of 256 KiB of text in 8-character deltas (32,768 deltas).

1. `agentls run` end to end against its floor (bench/floor.py: the same request through the SDK,
   every event consumed), interleaved, a fresh server process for each run. agentls' output is
   checked to hold the whole text.
2. Through `agentls serve` to an LSP client (bench/lsp_client.py over agentls.lsp.client, arrival
   times stamped as pygls hands each message over), in one server process after a warm-up prompt, a new session per prompt:
   * instant: the server sends the whole stream at once. Checked: the text-delta events
     concatenate to exactly the text. Measured: agent/event notifications a second (overall and
     in the busiest 1 s window), prompt -> last character.
   * held: the server stops before the last delta until the client has every earlier character,
     then sends it (the local server stamps that moment, `resumed_at`); the latency is from there
     to the client reading the notification that carries the last character. This is "the client
     sees the last character within N ms of the model sending it", free of throughput.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import (
    AGENTLS,
    MODEL,
    PYTHON,
    REPO,
    ApiServer,
    BenchResult,
    Figure,
    api_server,
    child_env,
    inprocess_env,
    log,
    median,
    paired_ratio,
    quiet,
    run_measured,
    runs,
    summary,
    temp_dir,
)
from bench.lsp_client import LspClient, Notification

TEXT_BYTES = 256 * 1024
CHUNK = 8
DELTAS = TEXT_BYTES // CHUNK
# Event positions in the local server's stream: message_start, ping, content_block_start, deltas.
LAST_DELTA_EVENT = 3 + DELTAS - 1


def answer_text() -> str:
    """256 KiB of ASCII prose-like lines, deterministic."""
    words = ("stream", "delta", "agent", "editor", "buffer", "token", "notify", "order", "byte")
    out: list[str] = []
    size = 0
    k = 0
    while size < TEXT_BYTES:
        line = " ".join(words[(k * 7 + j) % len(words)] for j in range(9)) + f" {k:06d}\n"
        out.append(line)
        size += len(line)
        k += 1
    return "".join(out)[:TEXT_BYTES]


def reply(text: str, hold: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"blocks": [text], "chunk_size": CHUNK}
    if hold:
        out.update(hold=True, hold_after=LAST_DELTA_EVENT)
    return out


# ---- agentls run ------------------------------------------------------------------------------


def run_cli(result: BenchResult, text: str, n: int) -> dict[str, Any]:
    with temp_dir("stream") as tmp:
        ws = tmp / "ws"
        ws.mkdir()
        bodies = tmp / "bodies.jsonl"
        cmd = [AGENTLS, "run", "--cwd", str(ws), "--model", MODEL, "Tell me a long story."]
        with api_server(tmp) as srv:
            srv.enqueue([reply(text)])
            out = tmp / "warmup.out"
            run_measured(cmd, env=child_env(tmp, srv.url), cwd=ws, stdout_path=out)
            recorded = srv.requests()
        if len(recorded) != 1 or recorded[0]["rejected"]:
            raise RuntimeError(f"stream warm-up: unexpected requests {recorded!r:.500}")
        body = recorded[0]["body"]
        bodies.write_text(json.dumps(body) + "\n")
        samples: dict[str, list[dict[str, float]]] = {"agentls": [], "floor": []}
        for i in range(n):
            order = ["agentls", "floor"] if i % 2 == 0 else ["floor", "agentls"]
            for kind in order:
                with api_server(tmp) as srv:
                    srv.enqueue([reply(text)])
                    env = child_env(tmp, srv.url)
                    quiet()
                    if kind == "agentls":
                        out = tmp / f"run{i}.out"
                        res = run_measured(cmd, env=env, cwd=ws, stdout_path=out)
                        if text not in out.read_text():
                            raise RuntimeError("stream: agentls run did not print the whole text")
                    else:
                        floor = [PYTHON, str(REPO / "bench" / "floor.py"), str(bodies)]
                        res = run_measured(floor, env=env, cwd=tmp)
                    server_cpu = srv.cpu_s()
                samples[kind].append(
                    {
                        "wall_s": res.wall_s,
                        "rss_mib": res.rss_mib,
                        "cpu_s": res.cpu_s,
                        "server_cpu_s": server_cpu,
                    }
                )
            log(
                f"run {i + 1}/{n}: agentls {samples['agentls'][-1]['wall_s']:.2f} s, "
                f"floor {samples['floor'][-1]['wall_s']:.2f} s"
            )

    def col(kind: str, key: str) -> list[float]:
        return [s[key] for s in samples[kind]]

    a, f = median(col("agentls", "wall_s")), median(col("floor", "wall_s"))
    r = paired_ratio(col("agentls", "wall_s"), col("floor", "wall_s"))
    server_cpu = median(col("agentls", "server_cpu_s"))
    result.add(
        Figure(
            "stream wall (agentls run)",
            a,
            "s",
            f,
            r,
            "<= 1.15x",
            r <= 1.15,
            note=f"server CPU during an agentls run: {server_cpu:.3f} s",
        )
    )
    a_rss, f_rss = median(col("agentls", "rss_mib")), median(col("floor", "rss_mib"))
    rss_ratio = paired_ratio(col("agentls", "rss_mib"), col("floor", "rss_mib"))
    result.add(Figure("stream peak RSS (agentls run)", a_rss, "MiB", f_rss, rss_ratio))
    cpu_ratio = paired_ratio(col("agentls", "cpu_s"), col("floor", "cpu_s"))
    result.add(
        Figure(
            "stream CPU (user+sys, agentls run)",
            median(col("agentls", "cpu_s")),
            "s",
            median(col("floor", "cpu_s")),
            cpu_ratio,
            note="less sensitive than wall time to other processes on the machine",
        )
    )
    result.details["cli"] = {
        kind: {key: summary(col(kind, key)) for key in samples[kind][0]} for kind in samples
    }
    return body


async def _inprocess(
    url: str, tmp: Path, text: str, body: dict[str, Any], i: int
) -> tuple[float, float]:
    """The same answer in this process (SDK imported): an agentls turn printed by the CLI's
    TerminalPrinter to /dev/null, then the SDK alone consuming the same stream."""
    import anthropic

    from agentls.cli.printing import TerminalPrinter
    from agentls.config import Settings
    from agentls.session.agent import Agent
    from agentls.store import Store
    from agentls.verify.workspace import DiskWorkspace

    ws = tmp / f"inproc{i}"
    ws.mkdir()
    store = await Store.open(ws / "data" / "agentls.db")
    agent = Agent(store=store, workspace=DiskWorkspace(ws), settings=Settings(model=MODEL))
    with open(os.devnull, "w") as sink:  # noqa: ASYNC230
        agent.subscribe(TerminalPrinter(sink))
        session = await agent.new_session(model=MODEL)
        started = time.perf_counter()
        result = await agent.prompt(session.id, "Tell me a long story.")
        agentls_s = time.perf_counter() - started
    await agent.aclose()
    await store.close()
    if result.text != text:
        raise RuntimeError("stream in process: the answer differs")
    client = anthropic.AsyncAnthropic(
        api_key="bench-key", base_url=url, max_retries=0, timeout=600.0
    )
    started = time.perf_counter()
    stream = await client.messages.create(**body)
    async for _ in stream:
        pass
    sdk_s = time.perf_counter() - started
    await client.close()
    return agentls_s, sdk_s


def run_inprocess(result: BenchResult, text: str, n: int, body: dict[str, Any]) -> None:
    pairs: list[tuple[float, float]] = []
    with temp_dir("stream-inproc") as tmp, api_server(tmp) as srv:
        with inprocess_env(tmp, srv.url):
            for i in range(n + 1):  # the first round warms up
                srv.enqueue([reply(text), reply(text)])
                quiet()
                pair = asyncio.run(_inprocess(srv.url, tmp, text, body, i))
                srv.control("/_test/clear", {})
                if i:
                    pairs.append(pair)
    a = median([p[0] for p in pairs])
    f = median([p[1] for p in pairs])
    per_delta = median([(x - y) / DELTAS * 1e6 for x, y in pairs])
    result.add(
        Figure(
            "stream in process: agentls per delta beyond the SDK",
            per_delta,
            "us",
            note=f"the turn in a warm process {a:.3f} s (printed to /dev/null) vs the SDK alone "
            f"on the same stream {f:.3f} s",
        )
    )
    result.details["in_process"] = {
        "agentls_turn_s": summary([p[0] for p in pairs]),
        "sdk_alone_s": summary([p[1] for p in pairs]),
    }


# ---- agentls serve ----------------------------------------------------------------------------


def _release_when_ready(srv: ApiServer) -> None:
    srv.control("/_test/release", {})


async def _prompt(client: LspClient, srv: ApiServer, text: str, *, hold: bool) -> dict[str, Any]:
    session = (await client.request("agent/newSession", {}))["sessionId"]
    srv.enqueue([reply(text, hold=hold)])
    quiet()
    received: list[str] = []
    length = 0
    last_at: float | None = None
    released = threading.Event()
    loop = asyncio.get_running_loop()
    notes: list[Notification] = []

    def on_note(note: Notification) -> None:
        nonlocal length, last_at
        params = note.params or {}
        if note.method != "agent/event" or params.get("sessionId") != session:
            return
        notes.append(note)
        if params.get("type") != "text-delta":
            return
        received.append(params["delta"])
        length += len(params["delta"])
        if length >= len(text) and last_at is None:
            last_at = note.at
        if hold and not released.is_set() and length >= len(text) - CHUNK:
            released.set()
            loop.run_in_executor(None, _release_when_ready, srv)

    client.on_notification = on_note
    started = time.time()
    result = await client.request(
        "agent/prompt", {"sessionId": session, "text": "Tell me a long story."}, timeout=300
    )
    ended = time.time()
    client.on_notification = None
    record = srv.requests()[-1]
    if result.get("finishReason") != "end_turn":
        raise RuntimeError(f"serve prompt ended with {result!r:.300}")
    deltas = [n for n in notes if n.params.get("type") == "text-delta"]
    times = [n.at for n in deltas]
    all_times = [n.at for n in notes]
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    out: dict[str, Any] = {
        "complete_and_in_order": "".join(received) == text,
        "events": len(notes),
        "text_notifications": len(deltas),
        "text_span_s": span,
        "text_rate_per_s": (len(deltas) - 1) / span if span > 0 else float("nan"),
        "max_events_in_1s": _max_in_window(all_times, 1.0),
        "max_text_in_1s": _max_in_window(times, 1.0),
        "min_gap_ms": 1000
        * min((b - a for a, b in zip(times, times[1:], strict=False)), default=float("nan")),
        "prompt_to_last_char_s": (last_at or ended) - started,
        "prompt_round_trip_s": ended - started,
    }
    if hold:
        if record.get("resumed_at") is None or last_at is None:
            raise RuntimeError("held stream: no resume time or no last character")
        out["last_char_latency_ms"] = 1000 * (last_at - record["resumed_at"])
    elif record.get("finished_at") is not None and last_at is not None:
        out["server_done_to_last_char_ms"] = 1000 * (last_at - record["finished_at"])
    return out


def _max_in_window(times: list[float], width: float) -> int:
    best = 0
    j = 0
    for i, t in enumerate(times):
        while times[j] < t - width:
            j += 1
        best = max(best, i - j + 1)
    return best


async def _serve_rounds(tmp: Path, srv: ApiServer, text: str, n: int) -> dict[str, list[Any]]:
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    client = await LspClient.spawn([AGENTLS, "serve"], child_env(tmp, srv.url), str(ws))
    rounds: dict[str, list[Any]] = {"instant": [], "held": []}
    try:
        await client.initialize(str(ws), {"agent": {"model": MODEL}})
        session = (await client.request("agent/newSession", {}))["sessionId"]
        srv.enqueue(["warm-up answer"])
        await client.request("agent/prompt", {"sessionId": session, "text": "hi"})
        for i in range(n):
            for kind in ("instant", "held") if i % 2 == 0 else ("held", "instant"):
                rounds[kind].append(await _prompt(client, srv, text, hold=kind == "held"))
            inst, held = rounds["instant"][-1], rounds["held"][-1]
            log(
                f"serve {i + 1}/{n}: instant {inst['text_notifications']} notifications in "
                f"{inst['text_span_s']:.2f} s ({inst['text_rate_per_s']:.0f}/s), "
                f"held last-char latency {held['last_char_latency_ms']:.1f} ms"
            )
    finally:
        await client.close()
    return rounds


def run_serve(result: BenchResult, text: str, n: int) -> None:
    with temp_dir("stream-serve") as tmp, api_server(tmp) as srv:
        rounds = asyncio.run(_serve_rounds(tmp, srv, text, n))
    inst, held = rounds["instant"], rounds["held"]
    complete = all(r["complete_and_in_order"] for r in inst + held)
    rate = median([r["text_rate_per_s"] for r in inst])
    peak = max(r["max_events_in_1s"] for r in inst + held)
    latency = median([r["last_char_latency_ms"] for r in held])
    result.add(
        Figure(
            "serve: every character, in order",
            float(complete),
            "check",
            target="all",
            met=complete,
            note=f"{len(inst) + len(held)} streams of {len(text):,} characters checked",
        )
    )
    result.add(
        Figure(
            "serve: agent/event notifications a second",
            rate,
            "/s",
            target="about 60",
            met=rate <= 66,
            note=f"text-delta notifications over the stream; busiest 1 s window, all events: "
            f"{peak}",
        )
    )
    result.add(
        Figure(
            "serve: last character latency (held stream)",
            latency,
            "ms",
            target="<= 50 ms",
            met=latency <= 50,
            note="local server's write of the last delta -> client reads it",
        )
    )
    p2l = median([r["prompt_to_last_char_s"] for r in inst])
    done = [r["server_done_to_last_char_ms"] for r in inst if "server_done_to_last_char_ms" in r]
    result.add(
        Figure(
            "serve: prompt -> last character (instant stream)",
            p2l,
            "s",
            note=f"server's last write -> client's last character: {median(done):.0f} ms"
            if done
            else "",
        )
    )
    result.details["serve"] = {
        kind: {key: summary([r[key] for r in rows]) for key in rows[0]}
        for kind, rows in rounds.items()
    }


def run(result: BenchResult) -> None:
    n = runs()
    text = answer_text()
    assert len(text) == TEXT_BYTES
    body = run_cli(result, text, n)
    run_inprocess(result, text, n, body)
    run_serve(result, text, n)
    result.details["text_bytes"] = TEXT_BYTES
    result.details["deltas"] = DELTAS
