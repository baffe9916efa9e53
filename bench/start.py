"""start: `agentls serve` from process start to its `initialize` answer, its RSS once idle, and
how long a first prompt takes.

Each run spawns `.venv/bin/agentls serve` (what an editor starts) and writes `initialize` at once
(the pipe holds it until the server reads); the time is from just before the spawn to reading the
answer (given by pygls once the server is imported). Then `initialized`, and either
* idle: wait until the resident set has not moved for 1 s (the SDK import in the background is
  done), read VmRSS, then send a first prompt (answered by the local server with a short text):
  "first prompt after idle"; or
* eager: send the first prompt right after `initialized` (it has to wait for the server proper and
  the SDK import); the agent/newSession before it shows when the server proper is up.
The baseline for RSS is a bare process importing the same libraries (pygls' server, lsprotocol
types, anthropic, aiosqlite, pydantic), measured the same way.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.common import (
    AGENTLS,
    MODEL,
    PYTHON,
    BenchResult,
    Figure,
    api_server,
    child_env,
    log,
    median,
    proc_rss_kib,
    quiet,
    ratio,
    runs,
    summary,
    temp_dir,
)
from bench.lsp_client import LspClient

BARE_IMPORTS = "import pygls.lsp.server, lsprotocol.types, anthropic, aiosqlite, pydantic"


async def _wait_idle_rss(pid: int, settle_s: float = 1.0, limit_s: float = 20.0) -> int:
    """VmRSS once it has not changed for settle_s."""
    deadline = time.monotonic() + limit_s
    last = proc_rss_kib(pid)
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        now = proc_rss_kib(pid)
        if now != last:
            last, stable_since = now, time.monotonic()
        elif time.monotonic() - stable_since >= settle_s:
            break
    return last


async def _one(tmp: Path, url: str, srv: Any, eager: bool) -> dict[str, float]:
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    env = child_env(tmp, url)
    quiet()
    t0 = time.perf_counter()
    client = await LspClient.spawn([AGENTLS, "serve"], env, str(ws))
    init = client.send_request(
        "initialize",
        {
            "processId": None,
            "rootUri": "file://" + str(ws),
            "capabilities": {"experimental": {"agent": {"approvals": True}}},
            "initializationOptions": {"agent": {"model": MODEL}},
        },
    )
    await asyncio.wait_for(init, 60)
    t_init = time.perf_counter() - t0
    client.notify("initialized", {})
    out = {"initialize_s": t_init}
    try:
        if not eager:
            out["idle_rss_mib"] = await _wait_idle_rss(client.proc.pid) / 1024
            out["idle_at_s"] = time.perf_counter() - t0
        srv.enqueue(["ok"])
        t1 = time.perf_counter()
        session = (await client.request("agent/newSession", {}))["sessionId"]
        if eager:
            # The server proper (pygls, agentls) is up: initialize itself was answered before.
            out["new_session_at_s"] = time.perf_counter() - t0
        result = await client.request("agent/prompt", {"sessionId": session, "text": "hi"})
        took = time.perf_counter() - t1
        if result.get("text") != "ok":
            raise RuntimeError(f"start: unexpected prompt result {result!r:.300}")
        out["first_prompt_eager_s" if eager else "first_prompt_idle_s"] = took
    finally:
        await client.close()
    return out


def _bare_rss(tmp: Path) -> dict[str, float]:
    code = f"{BARE_IMPORTS}; import sys, time; print('ready', flush=True); time.sleep(60)"
    quiet()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [PYTHON, "-c", code], env=child_env(tmp), stdout=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        ready = time.perf_counter() - t0
        rss = asyncio.run(_wait_idle_rss(proc.pid))
    finally:
        proc.kill()
        proc.wait()
    return {"rss_mib": rss / 1024, "import_s": ready}


def _bare_pygls(tmp: Path) -> float:
    """A bare Python importing only pygls' server and lsprotocol: what any pygls server pays
    before it can answer initialize."""
    quiet()
    t0 = time.perf_counter()
    subprocess.run(
        [PYTHON, "-c", "import pygls.lsp.server, lsprotocol.types"],
        env=child_env(tmp),
        check=True,
    )
    return time.perf_counter() - t0


def run(result: BenchResult) -> None:
    n = runs()
    rows: list[dict[str, float]] = []
    bare: list[dict[str, float]] = []
    pygls_s: list[float] = []
    with temp_dir("start") as tmp, api_server(tmp) as srv:
        for i in range(n):
            idle = asyncio.run(_one(tmp, srv.url, srv, eager=False))
            eager = asyncio.run(_one(tmp, srv.url, srv, eager=True))
            bare.append(_bare_rss(tmp))
            pygls_s.append(_bare_pygls(tmp))
            rows.append({**idle, **{f"eager_{k}": v for k, v in eager.items()}})
            log(
                f"run {i + 1}/{n}: initialize {idle['initialize_s'] * 1000:.0f} / "
                f"{eager['initialize_s'] * 1000:.0f} ms, idle RSS {idle['idle_rss_mib']:.1f} MiB "
                f"(bare {bare[-1]['rss_mib']:.1f}), first prompt idle "
                f"{idle['first_prompt_idle_s'] * 1000:.0f} ms / eager "
                f"{eager['first_prompt_eager_s'] * 1000:.0f} ms"
            )
    init = median([r["initialize_s"] for r in rows] + [r["eager_initialize_s"] for r in rows])
    result.add(
        Figure(
            "start: initialize answered after spawn",
            init * 1000,
            "ms",
            # No target any more: no editor waits on this answer (see docs/benchmarks.md).
            note=f"a bare `import pygls.lsp.server, lsprotocol.types` process: "
            f"{median(pygls_s) * 1000:.0f} ms",
        )
    )
    rss = median([r["idle_rss_mib"] for r in rows])
    bare_rss = median([b["rss_mib"] for b in bare])
    r = ratio(rss, bare_rss)
    result.add(
        Figure(
            "start: RSS once idle",
            rss,
            "MiB",
            bare_rss,
            r,
            "<= 1.2x",
            r <= 1.2,
            note=f"baseline: a bare process doing `{BARE_IMPORTS}`",
        )
    )
    result.add(
        Figure(
            "start: a request sent right after initialize, answered after spawn",
            median([r["eager_new_session_at_s"] for r in rows]) * 1000,
            "ms",
            note="agent/newSession right after `initialized`: the server proper imported and "
            "running",
        )
    )
    result.add(
        Figure(
            "start: first prompt, sent once idle",
            median([r["first_prompt_idle_s"] for r in rows]) * 1000,
            "ms",
            note="newSession + prompt answered with a short text; sent right after "
            f"`initialized` instead: {median([r['eager_first_prompt_eager_s'] for r in rows]) * 1000:.0f} ms "
            f"(it waits for the SDK import; bare import of the libraries: "
            f"{median([b['import_s'] for b in bare]) * 1000:.0f} ms)",
        )
    )
    result.details = {
        "runs": {key: summary([row[key] for row in rows]) for key in rows[0]},
        "bare": {key: summary([b[key] for b in bare]) for key in bare[0]},
        "bare_pygls_import_s": summary(pygls_s),
    }
