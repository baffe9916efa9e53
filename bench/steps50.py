"""steps50: 25 rounds of (read the module, edit one function), then an answer; `agentls run --yes`
end to end against its floor (bench/floor.py replaying the same requests with the SDK) and the
server's own share (bench/noop_client.py: the same requests without the SDK).

A warm-up run of agentls records the 51 request bodies it sends (the server's /_test/requests);
the floor and the no-op client replay exactly those bodies, so every contender makes the same
HTTP exchanges and gets the same streamed replies. Each measured run gets a fresh server process
and a fresh copy of the workspace; the order of the contenders alternates between rounds.
"""

from __future__ import annotations

import json
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
    log,
    median,
    ratio,
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

    def col(kind: str, key: str) -> list[float]:
        return [s[key] for s in samples[kind]]

    a_wall, f_wall = median(col("agentls", "wall_s")), median(col("floor", "wall_s"))
    a_rss, f_rss = median(col("agentls", "rss_mib")), median(col("floor", "rss_mib"))
    wall_ratio, rss_ratio = ratio(a_wall, f_wall), ratio(a_rss, f_rss)
    result.add(
        Figure("steps50 wall (agentls run --yes)", a_wall, "s", f_wall, wall_ratio, "<= 1.3x",
               wall_ratio <= 1.3)  # fmt: skip
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
    result.add(Figure("steps50 agentls CPU (user+sys)", median(col("agentls", "cpu_s")), "s",
                      median(col("floor", "cpu_s")), ratio(median(col("agentls", "cpu_s")),
                                                           median(col("floor", "cpu_s")))))  # fmt: skip
    result.details = {
        "requests": 2 * ROUNDS + 1,
        "request_bytes_total": sent_bytes,
        "module_bytes": len(module_text()),
        **{kind: {key: summary(col(kind, key)) for key in samples[kind][0]} for kind in samples},
    }
