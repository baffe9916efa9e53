"""Run the benchmarks: `python -m bench [NAME...]` (all when none is named; `make bench`).

Each benchmark prints its figures and writes bench/results/NAME.json (figures, samples, the
machine). `python -m bench --table` prints the table of docs/benchmarks.md from the JSON files present.
BENCH_RUNS sets the number of measured runs per figure (default 5: medians of 5).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback

from bench import common
from bench.common import RESULTS, BenchResult, fmt, machine, summary, temp_dir, warm_bytecode

BENCHMARKS = (
    "steps50",
    "stream",
    "editor",
    "first_token",
    "long_session",
    "loop",
    "start",
    "search",
    "language",
    "outline",
    "merge",
    "sandbox",
    "finish_gate",
    "panel_mentions",
    "panel_transcript",
)


def table() -> str:
    rows = []
    runs_info = []
    taken = None
    for name in BENCHMARKS:
        path = RESULTS / f"{name}.json"
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        taken = taken or {**data["machine"], "runs": data["runs"]}
        details = data.get("details", {})
        waits = details.get("quiet_wait_s", {}).get("n", 0)
        busy = len(details.get("measured_while_busy", []))
        steal = details.get("steal_share")
        stolen = "" if steal is None else f", {steal:.0%} of CPU time stolen by the host"
        medians = "" if data["runs"] == taken["runs"] else f"medians of {data['runs']}, "
        runs_info.append(
            f"{name} {data['machine']['taken_at'][:16].replace('T', ' ')} "
            f"({medians}{waits - busy} of {waits} measurements on idle cores{stolen})"
        )
        for f in data["figures"]:
            floor = fmt(f["floor"], f["unit"]) if f["floor"] is not None else ""
            rat = f"{f['ratio']:.2f}x" if f["ratio"] is not None else ""
            met = {True: "yes", False: "**no**", None: ""}[f["met"]]
            rows.append(
                f"| {f['name']} | {fmt(f['value'], f['unit'])} | {floor} | {rat} "
                f"| {f['target']} | {met} |"
            )
    head = [
        "| figure | agentls | floor / baseline | ratio | target | met |",
        "|---|---:|---:|---:|---|---|",
    ]
    out = "\n".join(head + rows)
    if taken:
        m = taken
        out = (
            f"{m['cpu']}, {m['cores']} cores, {m['mem_gib']} GiB, Linux {m['kernel']}, "
            f"Python {m['python']}, anthropic {m['versions'].get('anthropic')} "
            f"(commit {m['commit']}); medians of {m['runs']} runs. "
            f"Taken: {'; '.join(runs_info)}.\n\n" + out
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"any of {', '.join(BENCHMARKS)}")
    parser.add_argument(
        "--table", action="store_true", help="print the table of docs/benchmarks.md and exit"
    )
    args = parser.parse_args(argv)
    if args.table:
        print(table())
        return 0
    names = []
    for raw in args.names:
        names += [n for n in raw.replace(",", " ").split() if n]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    names = names or list(BENCHMARKS)
    m = machine()
    print(
        f"agentls benchmarks on {m['cpu']} ({m['cores']} cores, {m['mem_gib']} GiB), "
        f"Python {m['python']}, anthropic {m['versions'].get('anthropic')}, "
        f"load average {m['load_avg']}"
    )
    with temp_dir("pyc") as tmp:
        warm_bytecode(tmp)
    failed = []
    for name in names:
        started = time.monotonic()
        print(f"\n-- {name}", flush=True)
        result = BenchResult(name)
        common.reset_quiet()
        counters = common.cpu_counters()
        try:
            importlib.import_module(f"bench.{name}").run(result)
        except Exception:
            traceback.print_exc()
            failed.append(name)
            continue
        result.details["bench_seconds"] = round(time.monotonic() - started, 1)
        # Idle cores are not enough on a VM: the host may be slow to run ours.
        steal = common.steal_share(counters, common.cpu_counters())
        result.details["steal_share"] = None if steal is None else round(steal, 3)
        # Before each measurement the harness waited for the other processes to go quiet.
        result.details["quiet_wait_s"] = summary(common.waited, 2)
        result.details["measured_while_busy"] = list(common.noisy)
        if common.noisy:
            print(
                f"  (the machine stayed busy: {len(common.noisy)} of {len(common.waited)} "
                "measurements shared its cores with other processes)"
            )
        result.print()
        print(
            f"  -> {result.write().relative_to(RESULTS.parent.parent)}"
            f" ({result.details['bench_seconds']} s)"
        )
    print("\n" + table())
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
