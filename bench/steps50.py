"""steps50: 25 rounds of (read the module, edit one function), then an answer; `agentls run --yes`
end to end against its floor (bench/floor.py replaying the same requests with the SDK) and the
server's own share (bench/noop_client.py: the same requests without the SDK).

A warm-up run of agentls records the 51 request bodies it sends (the server's /_test/requests);
the floor and the no-op client replay exactly those bodies, so every contender makes the same
HTTP exchanges and gets the same streamed replies. Each measured run gets a fresh server process
and a fresh copy of the workspace; the order of the contenders alternates between rounds.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from bench.common import (
    AGENTLS,
    MODEL,
    PYTHON,
    REPO,
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

FUNCTIONS = 60
ROUNDS = 25
MODULE = "module.py"
PROMPT = "Bump the scale of 25 functions in module.py by one, one edit each."


def module_text() -> str:
    out = ['"""Sixty small functions (generated for the agentls benchmark)."""', ""]
    for k in range(FUNCTIONS):
        out += [
            "",
            f"def scaled_sum_{k:02d}(values):",
            f'    """Return the sum of values, each scaled by {k}."""',
            "    total = 0",
            "    for v in values:",
            f"        total += v * {k}",
            "    return total",
        ]
    return "\n".join(out) + "\n"


def edited_function(round_index: int) -> int:
    return (round_index * 7) % FUNCTIONS  # 7 and 60 are coprime: 25 different functions


def replies() -> list[Any]:
    script: list[Any] = []
    for i in range(ROUNDS):
        k = edited_function(i)
        script.append({"blocks": [{"type": "tool_use", "name": "read", "input": {"path": MODULE}}]})
        old = f"def scaled_sum_{k:02d}(values):\n"
        old += f'    """Return the sum of values, each scaled by {k}."""\n'
        old += "    total = 0\n    for v in values:\n"
        old += f"        total += v * {k}\n"
        new = old.replace(f"total += v * {k}\n", f"total += v * ({k} + 1)\n")
        script.append(
            {
                "blocks": [
                    {
                        "type": "tool_use",
                        "name": "edit",
                        "input": {"path": MODULE, "old_string": old, "new_string": new},
                    }
                ]
            }
        )
    script.append({"blocks": ["Done: 25 functions now scale by one more."]})
    return script


def new_workspace(tmp: Path, name: str) -> Path:
    ws = tmp / name
    ws.mkdir()
    (ws / MODULE).write_text(module_text())
    return ws


def check_workspace(ws: Path) -> None:
    text = (ws / MODULE).read_text()
    done = text.count(" + 1)\n")
    if done != ROUNDS:
        raise RuntimeError(f"steps50: expected {ROUNDS} edited functions, found {done}")


def agentls_cmd(ws: Path) -> list[str]:
    return [AGENTLS, "run", "--yes", "--cwd", str(ws), "--model", MODEL, PROMPT]


def import_times(tmp: Path, script: list[Any]) -> dict[str, float]:
    """One agentls run under -X importtime: milliseconds spent importing, by top-level package
    (each package's own modules and everything they import first)."""
    with api_server(tmp) as srv:
        srv.enqueue(script)
        ws = new_workspace(tmp, "importtime")
        env = child_env(tmp, srv.url, PYTHONPROFILEIMPORTTIME="1")
        res = run_measured(agentls_cmd(ws), env=env, cwd=ws)
    totals: dict[str, float] = {}
    for line in res.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if name.startswith("  ") or not cumulative.strip().isdigit():
            continue  # only the imports nothing else pulled in (depth 0)
        root = name.strip().split(".")[0]
        totals[root] = totals.get(root, 0.0) + int(cumulative) / 1000
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


async def _inprocess(
    url: str, tmp: Path, script: list[Any], bodies: Path, i: int
) -> tuple[float, float]:
    """The same turn in this process (SDK imported, client warm): agentls, then the SDK alone
    replaying the recorded requests. Returns both durations."""
    import anthropic

    from agentls.config import Settings
    from agentls.permission.broker import Answer
    from agentls.session.agent import Agent
    from agentls.store import Store
    from agentls.verify.workspace import DiskWorkspace

    async def yes(ctx: Any) -> Answer:
        return Answer("once")

    ws = new_workspace(tmp, f"inproc{i}")
    store = await Store.open(tmp / f"inproc{i}" / "data" / "agentls.db")
    agent = Agent(
        store=store, workspace=DiskWorkspace(ws), settings=Settings(model=MODEL), asker=yes
    )
    session = await agent.new_session(model=MODEL)
    started = time.perf_counter()
    result = await agent.prompt(session.id, PROMPT)
    agentls_s = time.perf_counter() - started
    await agent.aclose()
    await store.close()
    if result.finish_reason != "end_turn":
        raise RuntimeError(f"steps50 in process: {result}")
    check_workspace(ws)
    client = anthropic.AsyncAnthropic(
        api_key="bench-key", base_url=url, max_retries=0, timeout=600.0
    )
    started = time.perf_counter()
    with bodies.open(encoding="utf-8") as f:
        for line in f:
            body = json.loads(line)
            body.pop("stream", None)
            stream = await client.messages.create(**body, stream=True)
            async for _ in stream:
                pass
    sdk_s = time.perf_counter() - started
    await client.close()
    return agentls_s, sdk_s


def run(result: BenchResult) -> None:
    n = runs()
    script = replies()
    with temp_dir("steps50") as tmp:
        bodies_path = tmp / "bodies.jsonl"
        with api_server(tmp) as srv:
            srv.enqueue(script)
            ws = new_workspace(tmp, "warmup")
            run_measured(agentls_cmd(ws), env=child_env(tmp, srv.url), cwd=ws)
            check_workspace(ws)
            recorded = srv.requests()
        rejected = [r for r in recorded if r["rejected"]]
        if rejected or len(recorded) != 2 * ROUNDS + 1:
            raise RuntimeError(
                f"steps50 warm-up: {len(recorded)} requests, rejected: {rejected[:1]}"
            )
        lines = [json.dumps(r["body"], separators=(",", ":")) for r in recorded]
        bodies_path.write_text("\n".join(lines) + "\n")
        sent_bytes = sum(len(x) for x in lines)
        log(f"recorded {len(lines)} requests, {sent_bytes / 1e6:.2f} MB of request bodies")

        samples: dict[str, list[dict[str, float]]] = {"agentls": [], "floor": [], "noop": []}
        for i in range(n):
            order = ["agentls", "floor", "noop"]
            if i % 2:
                order.reverse()
            for kind in order:
                with api_server(tmp) as srv:
                    srv.enqueue(script)
                    env = child_env(tmp, srv.url)
                    quiet()
                    if kind == "agentls":
                        ws = new_workspace(tmp, f"ws{i}")
                        res = run_measured(agentls_cmd(ws), env=env, cwd=ws)
                        check_workspace(ws)
                    elif kind == "floor":
                        cmd = [PYTHON, str(REPO / "bench" / "floor.py"), str(bodies_path)]
                        res = run_measured(cmd, env=env, cwd=tmp)
                    else:
                        cmd = [PYTHON, str(REPO / "bench" / "noop_client.py"), str(bodies_path)]
                        res = run_measured([*cmd, srv.url], env=env, cwd=tmp)
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
                f"round {i + 1}/{n}: agentls {samples['agentls'][-1]['wall_s']:.2f} s, "
                f"floor {samples['floor'][-1]['wall_s']:.2f} s, "
                f"no-op {samples['noop'][-1]['wall_s']:.2f} s"
            )

        imports = import_times(tmp, script)
        log("imports (ms, by package): " + ", ".join(f"{k} {v:.0f}" for k, v in imports.items()))
        inproc: list[tuple[float, float]] = []
        with api_server(tmp) as srv:
            with inprocess_env(tmp, srv.url):
                for i in range(n + 1):  # the first round warms up
                    srv.enqueue(script)  # for agentls
                    srv.enqueue(script)  # for the SDK replay after it
                    quiet()
                    pair = asyncio.run(_inprocess(srv.url, tmp, script, bodies_path, i))
                    srv.control("/_test/clear", {})
                    if i:
                        inproc.append(pair)

    def col(kind: str, key: str) -> list[float]:
        return [s[key] for s in samples[kind]]

    a_wall, f_wall = median(col("agentls", "wall_s")), median(col("floor", "wall_s"))
    a_rss, f_rss = median(col("agentls", "rss_mib")), median(col("floor", "rss_mib"))
    wall_ratio = paired_ratio(col("agentls", "wall_s"), col("floor", "wall_s"))
    rss_ratio = paired_ratio(col("agentls", "rss_mib"), col("floor", "rss_mib"))
    result.add(
        Figure(
            "steps50 wall (agentls run --yes)",
            a_wall,
            "s",
            f_wall,
            wall_ratio,
            "<= 1.3x",
            wall_ratio <= 1.3,
        )
    )
    result.add(
        Figure("steps50 peak RSS", a_rss, "MiB", f_rss, rss_ratio, "<= 1.5x", rss_ratio <= 1.5)
    )
    noop_wall = median(col("noop", "wall_s"))
    server_cpu = median(col("agentls", "server_cpu_s"))
    result.add(
        Figure(
            "steps50 server share: no-op client wall",
            noop_wall,
            "s",
            note=f"server CPU during an agentls run: {server_cpu:.3f} s "
            f"({100 * server_cpu / a_wall:.0f}% of its wall time)",
        )
    )
    result.add(
        Figure(
            "steps50 CPU (user+sys, agentls run --yes)",
            median(col("agentls", "cpu_s")),
            "s",
            median(col("floor", "cpu_s")),
            paired_ratio(col("agentls", "cpu_s"), col("floor", "cpu_s")),
        )
    )
    turn_s = median([a for a, _ in inproc])
    replay_s = median([f for _, f in inproc])
    per_step = median([(a - f) / (2 * ROUNDS + 1) * 1000 for a, f in inproc])
    result.add(
        Figure(
            "steps50 in process: agentls per step beyond the SDK",
            per_step,
            "ms",
            note=f"the turn in a warm process {turn_s:.3f} s vs the SDK replaying its 51 requests "
            f"{replay_s:.3f} s (median of per-round differences / 51)",
        )
    )
    sdk_import = imports.get("anthropic", 0.0)
    other_import = sum(v for k, v in imports.items() if k != "anthropic")
    result.add(
        Figure(
            "steps50 imports in an agentls run",
            sdk_import + other_import,
            "ms",
            note=f"anthropic {sdk_import:.0f} ms (the floor pays it too), everything else "
            f"{other_import:.0f} ms (-X importtime, one run)",
        )
    )
    result.details = {
        "imports_ms": {k: round(v, 1) for k, v in imports.items()},
        "in_process": {
            "agentls_turn_s": summary([a for a, _ in inproc]),
            "sdk_replay_s": summary([f for _, f in inproc]),
        },
        "requests": 2 * ROUNDS + 1,
        "request_bytes_total": sent_bytes,
        "module_bytes": len(module_text()),
        **{kind: {key: summary(col(kind, key)) for key in samples[kind][0]} for kind in samples},
    }
