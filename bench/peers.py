"""peers: agentls, Claude Code and opencode side by side on the CLI benchmarks' scenarios, against
the same local Messages-API server (run by bench/peers.sh, which installs the peers from npm).

The scenarios are steps50's (25 rounds of read the module, edit one function, then an answer) and
stream's (one answer of 256 KiB in 8-character deltas). The server runs in this process and
answers each request from what it asks, so every agent gets the same answers whatever else it
sends: the step is the number of assistant messages in the request, the tools' names and fields
are the agent's own (agentls: read/edit with path and old_string; Claude Code: Read/Edit with an
absolute file_path; opencode: read/edit with filePath and oldString), and a request without tools
(a title, a quota check: an agent's side requests) gets a one-word answer and is not a step.

Beside them, agentls' floor (bench/floor.py): the requests agentls sent in its warm-up run,
replayed with the SDK alone, as agentls calls it (Python, the SDK's import and its streaming, and
nothing else): what agentls cannot go below while the SDK is its way to the API.

Each agent runs as a whole process (bench/launch.py: wall from its fork to its exit, peak RSS
from wait4), the three in turn, their order rotating between rounds, a fresh workspace and home
directory each run; the figures are medians and per-round ratios against Claude Code.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import common
from bench.common import (
    AGENTLS,
    MODEL,
    PYTHON,
    REPO,
    child_env,
    machine,
    quiet,
    run_measured,
    temp_dir,
)
from bench.steps50 import MODULE, PROMPT, ROUNDS, check_workspace, edited_function, module_text
from bench.stream import CHUNK, answer_text
from messages_api import MessagesAPIServer, reply, text, thinking, tool_use

STREAM_PROMPT = "Tell me a long story."


@dataclass(frozen=True)
class Agent:
    name: str
    read: str
    edit: str
    path_key: str  # the read and edit tools' field for the file
    old_key: str
    new_key: str
    absolute: bool  # the path as an absolute one


AGENTS = {
    "agentls": Agent("agentls", "read", "edit", "path", "old_string", "new_string", False),
    "claude": Agent("claude", "Read", "Edit", "file_path", "old_string", "new_string", True),
    "opencode": Agent("opencode", "read", "edit", "filePath", "oldString", "newString", True),
}


def _which(body: dict[str, Any]) -> Agent | None:
    tools = {t.get("name"): t for t in body.get("tools") or [] if isinstance(t, dict)}
    if "Read" in tools and "Edit" in tools:
        return AGENTS["claude"]
    read = tools.get("read")
    if read is None:
        return None
    fields = read.get("input_schema", {}).get("properties", {})
    return AGENTS["opencode"] if "filePath" in fields else AGENTS["agentls"]


class Answers:
    """The model for one scenario, stateless: each answer follows from the request."""

    def __init__(self, scenario: str, workspace: Path) -> None:
        self.scenario = scenario
        self.workspace = workspace
        self.story = answer_text()
        self.lock = threading.Lock()
        self.steps = 0
        self.side = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        agent = _which(body)
        with self.lock:
            if agent is None:
                self.side += 1
            else:
                self.steps += 1
        if agent is None:
            return reply(text("Benchmark."))
        # With thinking on (Claude Code's default), the real API starts each answer with a
        # thinking block, and the next request must send it back.
        think = [thinking("Next step.")] if (body.get("thinking") or {}).get("type") in (
            "enabled", "adaptive") else []  # fmt: skip
        if self.scenario == "stream":
            return reply(*think, text(self.story), chunk_size=CHUNK)
        k = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        if k >= 2 * ROUNDS:
            return reply(*think, text("Done: 25 functions now scale by one more."))
        path = str(self.workspace / MODULE) if agent.absolute else MODULE
        if k % 2 == 0:
            return reply(*think, tool_use(agent.read, {agent.path_key: path}))
        f = edited_function(k // 2)
        old = f"def scaled_sum_{f:02d}(values):\n"
        old += f'    """Return the sum of values, each scaled by {f}."""\n'
        old += "    total = 0\n    for v in values:\n"
        old += f"        total += v * {f}\n"
        new = old.replace(f"total += v * {f}\n", f"total += v * ({f} + 1)\n")
        edit = {agent.path_key: path, agent.old_key: old, agent.new_key: new}
        return reply(*think, tool_use(agent.edit, edit))


# ---- running them -----------------------------------------------------------------------------


def _binary(peers: Path, name: str) -> Path:
    """The agent's native binary: the platform package's (what the wrapper's postinstall links,
    used directly in case npm skipped the install scripts), else the npm bin."""
    patterns = {
        "claude": ["@anthropic-ai/claude-code-linux-*/claude", ".bin/claude"],
        "opencode": ["opencode-linux-*/bin/opencode", ".bin/opencode"],
    }[name]
    for pattern in patterns:
        for found in sorted((peers / "node_modules").glob(pattern)):
            if found.is_file() and os.access(found, os.X_OK) and found.stat().st_size > 1 << 20:
                return found
    raise SystemExit(f"peers: no {name} binary under {peers}/node_modules (run bench/peers.sh)")


def _command(
    name: str, scenario: str, peers: Path, ws: Path, home: Path, url: str
) -> tuple[list[str], dict[str, str]]:
    prompt = PROMPT if scenario == "steps50" else STREAM_PROMPT
    env = child_env(home, url)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
    )
    if name == "floor":
        return [PYTHON, str(REPO / "bench" / "floor.py"), str(ws.parent / f"{scenario}.jsonl")], env
    if name == "agentls":
        flags = ["--yes"] if scenario == "steps50" else []
        return [AGENTLS, "run", *flags, "--cwd", str(ws), "--model", MODEL, prompt], env
    if name == "claude":
        env.update(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
        cmd = [str(_binary(peers, "claude")), "-p", prompt, "--model", "claude-sonnet-4-5"]
        return [*cmd, "--permission-mode", "acceptEdits"], env
    config = home / "opencode.json"
    config.write_text(
        json.dumps(
            {
                "provider": {"anthropic": {"options": {"baseURL": url + "/v1"}}},
                "permission": {"read": "allow", "edit": "allow", "external_directory": "allow"},
                "autoupdate": False,
                "share": "disabled",
            }
        )
    )
    env.update(
        ANTHROPIC_BASE_URL=url + "/v1",  # opencode's SDK takes the /v1 in the base URL
        OPENCODE_CONFIG=str(config),
        OPENCODE_DISABLE_MODELS_FETCH="true",  # its bundled model list: no network
        OPENCODE_DISABLE_LSP_DOWNLOAD="true",
        OPENCODE_DISABLE_AUTOUPDATE="true",
    )
    cmd = [str(_binary(peers, "opencode")), "run", "--model", "anthropic/claude-sonnet-4-5"]
    return [*cmd, prompt], env


def _one(name: str, scenario: str, peers: Path, tmp: Path, tag: str) -> dict[str, float]:
    ws = tmp / f"{tag}-ws"
    home = tmp / f"{tag}-home"
    ws.mkdir()
    home.mkdir()
    if scenario == "steps50":
        (ws / MODULE).write_text(module_text())
    answers = Answers(scenario, ws)
    out = tmp / f"{tag}.out"
    with MessagesAPIServer(default=answers) as api:
        cmd, env = _command(name, scenario, peers, ws, home, api.url)
        quiet()
        res = run_measured(cmd, env=env, cwd=ws, stdout_path=out, timeout=600)
        rejected = [r.error for r in api.requests if r.status != 200]
        if name == "agentls":  # what the floor replays
            bodies = [r.body for r in api.requests if r.body.get("tools")]
            with (tmp / f"{scenario}.jsonl").open("w") as f:
                f.writelines(json.dumps(body) + "\n" for body in bodies)
    if rejected:
        raise RuntimeError(f"peers: {name} sent a request the API refused: {rejected[0]}")
    want = 2 * ROUNDS + 1 if scenario == "steps50" else 1
    if answers.steps != want:
        raise RuntimeError(f"peers: {name} made {answers.steps} model steps, not {want}")
    if name == "floor":
        pass  # it replays requests: no file is edited, nothing is printed but a count
    elif scenario == "steps50":
        check_workspace(ws)
    elif answers.story[-2000:] not in out.read_text(errors="replace"):
        raise RuntimeError(f"peers: {name} did not print the story's end")
    return {"wall_s": res.wall_s, "rss_mib": res.rss_mib, "cpu_s": res.cpu_s, "side": answers.side}


def _med(rows: list[dict[str, float]], key: str) -> float:
    return float(statistics.median(r[key] for r in rows))


def _range(values: list[float], digits: int = 2) -> str:
    return f"{min(values):.{digits}f} to {max(values):.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__)
    parser.add_argument("--peers", type=Path, required=True, help="the npm install's prefix")
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 5)))
    parser.add_argument("--scenarios", nargs="+", default=["steps50", "stream"])
    parser.add_argument("--agents", nargs="+", default=[*AGENTS, "floor"])
    args = parser.parse_args(argv)
    m = machine()
    print(f"peers on {m['cpu']} ({m['cores']} cores), load average {m['load_avg']}", flush=True)
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    with temp_dir("peers") as tmp:
        for scenario in args.scenarios:
            rows: dict[str, list[dict[str, float]]] = {a: [] for a in args.agents}
            for i in range(args.runs + 1):  # the first round warms the caches up
                k = i % len(args.agents)
                order = args.agents[k:] + args.agents[:k]
                if i == 0 and "floor" in order:  # it replays agentls' requests of a run before
                    order.remove("floor")
                    order.append("floor")
                for name in order:
                    sample = _one(name, scenario, args.peers, tmp, f"{scenario}-{name}-{i}")
                    if i:
                        rows[name].append(sample)
                done = ", ".join(f"{a} {rows[a][-1]['wall_s']:.2f} s" for a in rows if i)
                print(f"  .. {scenario} round {i}/{args.runs}: {done or 'warm-up'}", flush=True)
            results[scenario] = rows
    base = "claude" if "claude" in args.agents else args.agents[0]
    print(
        f"\n| scenario | agent | wall | peak RSS | CPU | wall / {base} (range) | RSS / {base} "
        f"| CPU / {base} |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    summary: dict[str, Any] = {}
    for scenario, rows in results.items():
        summary[scenario] = {}
        for name, samples in rows.items():
            walls = [s["wall_s"] / b["wall_s"] for s, b in zip(samples, rows[base], strict=True)]
            rss = [s["rss_mib"] / b["rss_mib"] for s, b in zip(samples, rows[base], strict=True)]
            cpu = [s["cpu_s"] / b["cpu_s"] for s, b in zip(samples, rows[base], strict=True)]
            print(
                f"| {scenario} | {name} | {_med(samples, 'wall_s'):.2f} s "
                f"| {_med(samples, 'rss_mib'):.0f} MiB | {_med(samples, 'cpu_s'):.2f} s "
                f"| {statistics.median(walls):.2f}x ({_range(walls)}) "
                f"| {statistics.median(rss):.2f}x | {statistics.median(cpu):.2f}x |"
            )
            summary[scenario][name] = {
                "samples": samples,
                "wall_ratio_median": round(statistics.median(walls), 3),
                "rss_ratio_median": round(statistics.median(rss), 3),
                "cpu_ratio_median": round(statistics.median(cpu), 3),
            }
    out = common.RESULTS / "peers.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    m["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    out.write_text(json.dumps({"machine": m, "runs": args.runs, "results": summary}, indent=1))
    print(f"\n-> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
