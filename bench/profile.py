"""Profile a benchmark's agentls side: `python -m bench.profile NAME` (steps50, stream, start,
turn, loop, search). Needs the bench extra (py-spy, pyinstrument): `pip install -e '.[bench]'`.

steps50 and stream run one agentls process exactly as the benchmark does, under
`py-spy record` (sampling, 250 Hz, every thread); the collapsed stacks go to
bench/results/profile-NAME.txt and a summary is printed: where the samples are by area (the
import of the SDK, the SDK at work, pydantic, SQLite, asyncio...) and the top functions by
inclusive and by own samples. start runs `agentls serve` under -X importtime. turn (the steps50 turn in process, the SDK already imported), loop (the in-process step of bench/loop.py) and search (the grep
and glob tools of bench/search.py) run under pyinstrument (bench/results/profile-NAME.txt).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import AGENTLS, MODEL, RESULTS, api_server, child_env, temp_dir

AREAS = (
    # (area, test on a frame "function (file:line)"), first match from the leaf up wins
    ("import (module loading)", lambda f: "_find_and_load" in f or "<module>" in f),
    ("sqlite / aiosqlite", lambda f: "aiosqlite" in f or "sqlite3" in f),
    ("pydantic", lambda f: "pydantic" in f),
    ("json", lambda f: "json/" in f or "jiter" in f),
    ("httpx / httpcore / h11", lambda f: "httpx" in f or "httpcore" in f or "h11" in f),
    ("anthropic SDK", lambda f: "anthropic/" in f),
    ("agentls", lambda f: "agentls/" in f),
    ("asyncio / selectors", lambda f: "asyncio/" in f or "selectors" in f),
)


# Leaf frames of a thread that waits (py-spy counts a wait inside C code as busy): worker threads
# blocked on their queues, and the event loop blocked in select() (waiting for the server).
IDLE_LEAVES = (
    "_connection_worker_thread (aiosqlite/core.py:59)",
    "Condition.wait (",
    "WorkerThread.run (anyio/_backends/_asyncio.py:1124)",
    "_worker (concurrent/futures/thread.py:81)",
    "EpollSelector.select (",
    "Event.wait (",
)


def _frames(stack: str) -> list[str]:
    return stack.split(";")


def summarize(raw: Path, top: int = 25) -> str:
    """Areas, then top functions by inclusive and own samples, from py-spy's raw output."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    total = idle = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = _frames(stack)
        if any(_short(frames[-1]).startswith(leaf) for leaf in IDLE_LEAVES):
            idle += count
            continue
        total += count
        own[_short(frames[-1])] += count
        for frame in set(frames):
            inclusive[_short(frame)] += count
        area = "other"
        if any("_find_and_load" in f for f in frames):
            area = "import (module loading)"
        else:
            for frame in reversed(frames):
                hit = next((name for name, test in AREAS[1:] if test(frame)), None)
                if hit:
                    area = hit
                    break
        areas[area] += count
    rate = 250
    out = [
        f"{total} busy samples = {total / rate:.2f} s of CPU at {rate} Hz, all threads "
        f"({idle} waiting samples left out: idle threads, the event loop waiting for the "
        f"server) from {raw.name}",
        "",
        "by area (the innermost frame that is in one):",
    ]
    for area, count in areas.most_common():
        out.append(f"  {100 * count / total:5.1f}%  {area}")
    out += ["", f"top {top} by inclusive samples:"]
    for name, count in inclusive.most_common(top):
        out.append(f"  {100 * count / total:5.1f}%  {name}")
    out += ["", f"top {top} by own samples:"]
    for name, count in own.most_common(top):
        out.append(f"  {100 * count / total:5.1f}%  {name}")
    return "\n".join(out)


def _short(frame: str) -> str:
    """'func (path/to/site-packages/pkg/mod.py:12)' -> 'func (pkg/mod.py:12)'."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    for marker in ("site-packages/", "server/", "lib/python3.11/"):
        if marker in where:
            where = where.split(marker, 1)[1]
    return f"{name} ({where})"


def pyspy(cmd: list[str], env: dict[str, str], cwd: Path, out: Path) -> None:
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
    subprocess.run(
        [spy, "record", "--rate", "250", "--format", "raw", "--output", str(out), "--", *cmd],
        env=env,
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def profile_steps50(tmp: Path) -> Path:
    from bench import steps50

    out = RESULTS / "profile-steps50.txt"
    with api_server(tmp) as srv:
        srv.enqueue(steps50.replies())
        ws = steps50.new_workspace(tmp, "ws")
        pyspy(steps50.agentls_cmd(ws), child_env(tmp, srv.url), ws, out)
        steps50.check_workspace(ws)
    return out


def profile_turn(tmp: Path) -> Path:
    """The steps50 turn in process (the SDK already imported), under pyinstrument: what agentls
    does per step beyond the import."""
    from pyinstrument import Profiler

    from agentls.config import Settings
    from agentls.permission.broker import Answer
    from agentls.session.agent import Agent
    from agentls.store import Store
    from agentls.verify.workspace import DiskWorkspace
    from bench import steps50

    out = RESULTS / "profile-turn.txt"
    profiler = Profiler(interval=0.0005, async_mode="disabled")

    async def turn(url: str, ws: Path, db: Path) -> None:
        async def yes(ctx: Any) -> Answer:
            return Answer("once")

        store = await Store.open(db)
        agent = Agent(
            store=store, workspace=DiskWorkspace(ws), settings=Settings(model=MODEL), asker=yes
        )
        session = await agent.new_session(model=MODEL)
        profiler.start()
        result = await agent.prompt(session.id, steps50.PROMPT)
        profiler.stop()
        assert result.finish_reason == "end_turn", result
        await agent.aclose()
        await store.close()

    import anthropic  # noqa: F401  (imported before, as in a warm process)

    with api_server(tmp) as srv:
        os.environ.update(
            ANTHROPIC_BASE_URL=srv.url,
            ANTHROPIC_API_KEY="bench-key",
            XDG_CONFIG_HOME=str(tmp / "config"),
        )
        for k in range(2):  # the first turn warms up
            srv.enqueue(steps50.replies())
            ws = steps50.new_workspace(tmp, f"ws{k}")
            if k == 1:
                profiler.reset()
            asyncio.run(turn(srv.url, ws, tmp / f"db{k}" / "agentls.db"))
            steps50.check_workspace(ws)
    out.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
    return out


def profile_stream(tmp: Path) -> Path:
    from bench import stream

    out = RESULTS / "profile-stream.txt"
    ws = tmp / "ws"
    ws.mkdir()
    with api_server(tmp) as srv:
        srv.enqueue([stream.reply(stream.answer_text())])
        cmd = [AGENTLS, "run", "--cwd", str(ws), "--model", MODEL, "Tell me a long story."]
        pyspy(cmd, child_env(tmp, srv.url), ws, out)
    return out


def profile_start(tmp: Path) -> Path:
    """`agentls serve` from spawn to idle under -X importtime (py-spy's own messages would go to
    the server's stdout, the LSP channel): the imports before `initialize` is answered, and the
    SDK's in the background after `initialized`."""
    from bench.lsp_client import LspClient

    out = RESULTS / "profile-start.txt"
    ws = tmp / "ws"
    ws.mkdir()
    err = tmp / "importtime.txt"
    marks: dict[str, float] = {}

    async def drive() -> None:
        env = child_env(tmp, PYTHONPROFILEIMPORTTIME="1")
        client = await LspClient.spawn([AGENTLS, "serve"], env, str(ws), stderr_path=err)
        await client.initialize(str(ws), {"agent": {"model": MODEL}})
        marks["initialized"] = err.stat().st_size
        await asyncio.sleep(5)
        await client.close()

    asyncio.run(drive())
    text = err.read_text()
    before, after = text[: int(marks["initialized"])], text[int(marks["initialized"]) :]
    lines = [
        "imports before `initialize` was answered (ms, cumulative, depth 0 and 1):",
        *_import_table(before),
        "",
        "imports after it (the background SDK import):",
        *_import_table(after),
    ]
    out.write_text("\n".join(lines) + "\n")
    return out


def _import_table(text: str, depth: int = 1) -> list[str]:
    rows: list[tuple[int, str, float]] = []
    total = 0.0
    for line in text.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if not cumulative.strip().isdigit():
            continue
        level = (len(name) - len(name.lstrip(" ")) - 1) // 2
        if level <= depth:
            ms = int(cumulative) / 1000
            rows.append((level, name.strip(), ms))
            if level == 0:
                total += ms
    out = [f"  total at depth 0: {total:.0f} ms"]
    for level in range(depth + 1):
        out.append(f"  largest at depth {level}:")
        top = sorted((r for r in rows if r[0] == level), key=lambda r: -r[2])[:12]
        for _, name, ms in top:
            out.append(f"  {ms:8.1f}  {name}")
    return out


def profile_loop(tmp: Path) -> Path:
    from pyinstrument import Profiler

    from bench import loop

    out = RESULTS / "profile-loop.txt"
    profiler = Profiler(interval=0.0005, async_mode="disabled")
    with api_server(tmp) as srv:
        os.environ.update(
            ANTHROPIC_BASE_URL=srv.url,
            ANTHROPIC_API_KEY="bench-key",
            XDG_CONFIG_HOME=str(tmp / "config"),
        )
        asyncio.run(loop.measure(tmp, srv, 8, profiler=profiler))
    out.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
    return out


def profile_load(tmp: Path) -> Path:
    """Loading the loop's 5,000-message session (Agent.session on a fresh store, from its rows):
    10 loads in one profile."""
    from pyinstrument import Profiler

    from agentls.config import Settings
    from agentls.session.agent import Agent
    from agentls.store import Store
    from agentls.verify.workspace import DiskWorkspace
    from bench import loop

    out = RESULTS / "profile-load.txt"
    root = tmp / "ws"
    root.mkdir()
    db = tmp / "data" / "agentls.db"

    async def build() -> str:
        store = await Store.open(db)
        sid = await loop.build(store, root)
        await store.close()
        return sid

    async def loads(sid: str, profiler: Profiler) -> None:
        kept = []
        for _ in range(10):
            store = await Store.open(db)
            agent = Agent(
                store=store, workspace=DiskWorkspace(root), settings=Settings(model=loop.MODEL)
            )
            profiler.start()
            state = await agent.session(sid)
            profiler.stop()
            kept.append(state.messages)  # fresh memory for each load, as in a new process
            await agent.aclose()
            await store.close()

    sid = asyncio.run(build())
    profiler = Profiler(interval=0.0002, async_mode="disabled")
    asyncio.run(loads(sid, profiler))
    text = profiler.output_text(unicode=False, color=False, show_all=False)
    out.write_text("== load, from its rows: 10 loads ==\n\n" + text)
    return out


def profile_search(tmp: Path) -> Path:
    from pyinstrument import Profiler

    from bench import search

    out = RESULTS / "profile-search.txt"
    root = tmp / "tree"
    search.generate(root)

    async def calls() -> None:
        from agentls.tools.glob import GlobTool
        from agentls.tools.grep import GrepTool

        ctx = search.Ctx(root)
        grep, glob = GrepTool(), GlobTool()
        for pattern in search.GREP_QUERIES.values():
            await grep.run(grep.parse({"pattern": pattern}), ctx)
        for pattern in search.GLOB_QUERIES.values():
            await glob.run(glob.parse({"pattern": pattern}), ctx)

    profiler = Profiler(interval=0.0005, async_mode="disabled")
    asyncio.run(calls())  # warms the page cache
    profiler.start()
    asyncio.run(calls())
    profiler.stop()
    out.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile")
    parser.add_argument(
        "name", choices=("steps50", "turn", "stream", "start", "loop", "load", "search")
    )
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    runner: Any = globals()[f"profile_{args.name}"]
    with temp_dir(f"profile-{args.name}") as tmp:
        out = runner(tmp)
    if args.name in ("loop", "load", "search", "turn", "start"):
        print(out.read_text())
    else:
        print(summarize(out))
    print(f"\n-> {out.relative_to(RESULTS.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
