"""first_token: from a prompt to its first token, beyond the API's own time to first byte.

The local Messages-API server stamps each request (as time.time(), comparable across processes)
when its headers had been read (`received_at`) and just before its answer's first byte was
written (`first_byte_at`); the difference is the API's own time to first byte (TTFB). The answer
is one short text, written at once. Three ways to the first token:

* serve: a warm `agentls serve` (a first prompt answered before) and an LSP client
  (bench/lsp_client.py over agentls.lsp.client, each message stamped as pygls hands it over); `agent/prompt` written -> the first
  `text-delta` notification read, in one session.
* run, warm: the CLI's agent in a warm process (the SDK imported, the client built by a first
  prompt), its events printed as `agentls run` prints them (TerminalPrinter, visible_stream);
  `Agent.prompt` called -> the first text flushed.
* run, whole: `agentls run` as a process; spawned -> the first byte of its output read from
  the pipe.

Each splits into: before (the prompt sent -> the request's headers read by the server: the
front end, the turn, the SDK building and sending the request), the API's TTFB, and after (the
first byte written -> the first token shown: the SDK reading the stream, the turn's event, the
notification or the terminal's write).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.common import (
    AGENTLS,
    MODEL,
    PYTHON,
    ApiServer,
    BenchResult,
    Figure,
    api_server,
    child_env,
    inprocess_env,
    log,
    median,
    quiet,
    run_measured,
    runs,
    summary,
    temp_dir,
)
from bench.lsp_client import LspClient, Notification

ANSWER = "The first token, then a few more words to stream."
PROMPT = "Say something short."
TARGET_MS = 20.0


def _split(sent: float, shown: float, record: dict[str, Any]) -> dict[str, float]:
    """One sample (ms): the whole wait, the API's TTFB, what is beyond it, before and after."""
    received, first_byte = record["received_at"], record["first_byte_at"]
    if received is None or first_byte is None:
        raise RuntimeError(f"first_token: the server did not stamp the request: {record!r:.300}")
    total = 1000 * (shown - sent)
    api = 1000 * (first_byte - received)
    return {
        "total_ms": total,
        "api_ttfb_ms": api,
        "beyond_ms": total - api,
        "before_ms": 1000 * (received - sent),
        "after_ms": 1000 * (shown - first_byte),
    }


def _last_request(srv: ApiServer) -> dict[str, Any]:
    recorded = srv.requests()
    if not recorded or recorded[-1]["rejected"]:
        raise RuntimeError(f"first_token: unexpected requests {recorded!r:.500}")
    return recorded[-1]


# ---- through agentls serve ------------------------------------------------------------------


async def _serve(tmp: Path, srv: ApiServer, n: int) -> list[dict[str, float]]:
    ws = tmp / "serve-ws"
    ws.mkdir()
    client = await LspClient.spawn([AGENTLS, "serve"], child_env(tmp, srv.url), str(ws))
    samples: list[dict[str, float]] = []
    try:
        await client.initialize(str(ws), {"agent": {"model": MODEL}})
        session = (await client.request("agent/newSession", {}))["sessionId"]
        for i in range(n + 1):  # the first prompt warms the server up
            srv.enqueue([ANSWER])
            first: list[Notification] = []

            def on_note(note: Notification, first: list[Notification] = first) -> None:
                params = note.params or {}
                if (
                    not first
                    and note.method == "agent/event"
                    and params.get("sessionId") == session
                    and params.get("type") == "text-delta"
                ):
                    first.append(note)

            client.on_notification = on_note
            quiet()
            sent = time.time()
            result = await client.request(
                "agent/prompt", {"sessionId": session, "text": PROMPT}, timeout=120
            )
            client.on_notification = None
            if result.get("finishReason") != "end_turn" or not first:
                raise RuntimeError(f"first_token (serve): {result!r:.300}")
            if i:
                samples.append(_split(sent, first[0].at, _last_request(srv)))
    finally:
        await client.close()
    return samples


# ---- agentls run, warm (in this process) ----------------------------------------------------


class _FirstFlush:
    """A terminal standing in for stdout: the time of the first flush that carried text."""

    def __init__(self) -> None:
        self.pending = 0
        self.at: float | None = None

    def write(self, text: str) -> int:
        self.pending += len(text)
        return len(text)

    def flush(self) -> None:
        if self.pending and self.at is None:
            self.at = time.time()

    def isatty(self) -> bool:
        return False


async def _run_warm(tmp: Path, srv: ApiServer, n: int) -> list[dict[str, float]]:
    from typing import TextIO, cast

    from agentls.cli.printing import TerminalPrinter
    from agentls.cli.terminal import visible_stream
    from agentls.config import Settings
    from agentls.session.agent import Agent
    from agentls.store import Store
    from agentls.verify.workspace import DiskWorkspace

    ws = tmp / "warm-ws"
    ws.mkdir()
    store = await Store.open(tmp / "warm-data" / "agentls.db")
    agent = Agent(store=store, workspace=DiskWorkspace(ws), settings=Settings(model=MODEL))
    samples: list[dict[str, float]] = []
    try:
        session = await agent.new_session(model=MODEL)
        for i in range(n + 1):  # the first prompt imports and builds the SDK's client
            sink = _FirstFlush()
            unsubscribe = agent.subscribe(TerminalPrinter(visible_stream(cast(TextIO, sink))))
            srv.enqueue([ANSWER])
            quiet()
            sent = time.time()
            result = await agent.prompt(session.id, PROMPT)
            unsubscribe()
            if result.finish_reason != "end_turn" or sink.at is None:
                raise RuntimeError(f"first_token (run, warm): {result}")
            if i:
                samples.append(_split(sent, sink.at, _last_request(srv)))
    finally:
        await agent.aclose()
        await store.close()
    return samples


# ---- agentls run, the whole process -----------------------------------------------------------


def _run_whole(tmp: Path, srv: ApiServer, n: int) -> list[dict[str, float]]:
    ws = tmp / "whole-ws"
    ws.mkdir()
    cmd = [AGENTLS, "run", "--cwd", str(ws), "--model", MODEL, PROMPT]
    env = child_env(tmp, srv.url)
    samples: list[dict[str, float]] = []
    for i in range(n + 1):  # the first run fills the byte-code cache
        srv.enqueue([ANSWER])
        quiet()
        started = time.time()
        proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=ws,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        first = os.read(proc.stdout.fileno(), 1)
        shown = time.time()
        rest = proc.stdout.read()
        if proc.wait(60) != 0 or ANSWER not in (first + rest).decode():
            raise RuntimeError(f"first_token (run): exit {proc.returncode}, {first + rest!r:.300}")
        if i:
            sample = _split(started, shown, _last_request(srv))
            sample["exit_ms"] = 1000 * (time.time() - started)
            samples.append(sample)
    return samples


def _baselines(tmp: Path, n: int) -> dict[str, float]:
    """Medians of n (ms): a process of this Python that starts and exits, and `import anthropic`
    timed inside a fresh one (what `agentls run` cannot start a request without)."""
    env = child_env(tmp)
    code = "import time; t = time.perf_counter(); import anthropic; print(time.perf_counter() - t)"
    start: list[float] = []
    sdk: list[float] = []
    for _ in range(n + 1):  # the first fills the byte-code cache
        quiet()
        start.append(1000 * run_measured([PYTHON, "-c", "pass"], env=env, cwd=tmp).wall_s)
        quiet()
        out = subprocess.run(
            [PYTHON, "-c", code], env=env, cwd=tmp, capture_output=True, text=True, check=True
        )
        sdk.append(1000 * float(out.stdout))
    return {"python_ms": median(start[1:]), "sdk_import_ms": median(sdk[1:])}


def _imports_ms(tmp: Path, srv: ApiServer) -> float:
    """One `agentls run` under -X importtime: the milliseconds its imports took (the top-level
    imports' cumulative times; the measurement itself adds to them)."""
    ws = tmp / "whole-ws"
    srv.enqueue([ANSWER])
    env = child_env(tmp, srv.url, PYTHONPROFILEIMPORTTIME="1")
    cmd = [AGENTLS, "run", "--cwd", str(ws), "--model", MODEL, PROMPT]
    proc = subprocess.run(cmd, env=env, cwd=ws, capture_output=True, text=True, check=True)
    total = 0
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if not name.startswith("  ") and cumulative.strip().isdigit():
                total += int(cumulative)
    return total / 1000


def _figure(result: BenchResult, name: str, samples: list[dict[str, float]], made: str) -> None:
    def med(key: str) -> float:
        return median([s[key] for s in samples])

    beyond = med("beyond_ms")
    result.add(
        Figure(
            name,
            beyond,
            "ms",
            target=f"<= {TARGET_MS:.0f} ms" if "whole" not in name else "",
            met=beyond <= TARGET_MS if "whole" not in name else None,
            note=f"prompt -> first token {med('total_ms'):.1f} ms: {made} {med('before_ms'):.1f}"
            f" ms, the API's TTFB {med('api_ttfb_ms'):.2f} ms, first byte -> shown "
            f"{med('after_ms'):.1f} ms",
        )
    )


def run(result: BenchResult) -> None:
    n = runs()
    with temp_dir("first-token") as tmp, api_server(tmp) as srv:
        serve = asyncio.run(_serve(tmp, srv, 4 * n))
        log(f"serve: beyond the API's TTFB {median([s['beyond_ms'] for s in serve]):.1f} ms")
        with inprocess_env(tmp, srv.url):
            warm = asyncio.run(_run_warm(tmp, srv, 4 * n))
        log(f"run, warm: beyond the API's TTFB {median([s['beyond_ms'] for s in warm]):.1f} ms")
        whole = _run_whole(tmp, srv, n)
        imports_ms = _imports_ms(tmp, srv)
        base = _baselines(tmp, n)
        log(f"run, whole: beyond the API's TTFB {median([s['beyond_ms'] for s in whole]):.0f} ms")
    _figure(result, "first token through serve, beyond the API's TTFB", serve, "prompt -> request")
    _figure(result, "first token, agentls run warm, beyond the TTFB", warm, "prompt -> request")
    _figure(result, "first token, agentls run whole, beyond the TTFB", whole, "spawn -> request")
    result.figures[-1].note += (
        f"; a Python process that starts and exits takes {base['python_ms']:.0f} ms, "
        f"`import anthropic` {base['sdk_import_ms']:.0f} ms in a fresh one; agentls' imports "
        f"{imports_ms:.0f} ms (under -X importtime, which inflates them); "
        f"the process exits {median([s['exit_ms'] for s in whole]):.0f} ms after its spawn"
    )
    result.details = {
        name: {key: summary([s[key] for s in rows], 2) for key in rows[0]}
        for name, rows in (("serve", serve), ("run_warm", warm), ("run_whole", whole))
    }
    result.details["run_whole_imports_ms"] = round(imports_ms, 1)
    result.details["baselines_ms"] = {k: round(v, 1) for k, v in base.items()}
