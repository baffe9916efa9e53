"""Shared plumbing for the benchmarks: processes measured with wait4(), the local Messages-API
server as a subprocess, statistics, machine facts and the JSON results.

Every child process (agentls, the floors, the servers) gets the same environment:

* ``PYTHONDONTWRITEBYTECODE`` removed and ``PYTHONPYCACHEPREFIX`` set to ``bench/results/pycache``,
  so that byte code is cached as on a normal install (an editable install with byte-code writing
  off would recompile agentls at every start) without writing into the source tree;
* ``XDG_CONFIG_HOME`` and ``AGENTLS_DATA_DIR`` in a temporary directory, so no user configuration,
  rules file or database takes part.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
PYCACHE = RESULTS / "pycache"
PYTHON = sys.executable
BIN = Path(sys.executable).parent
AGENTLS = str(BIN / "agentls")
MODEL = "claude-sonnet-5-5"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def runs(default: int = 5) -> int:
    """How many measured runs per figure (BENCH_RUNS overrides; never fewer than 1)."""
    return max(1, int(os.environ.get("BENCH_RUNS", default)))


# ---- statistics -----------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def summary(values: Sequence[float], digits: int = 4) -> dict[str, Any]:
    """median, min, max and the samples, rounded."""
    vals = [float(v) for v in values]
    return {
        "median": round(median(vals), digits),
        "min": round(min(vals), digits) if vals else None,
        "max": round(max(vals), digits) if vals else None,
        "n": len(vals),
        "samples": [round(v, digits) for v in vals],
    }


def ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("nan")


# ---- environment ----------------------------------------------------------------------------


def child_env(tmp: Path, base_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("AGENTLS_MODEL", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env["XDG_CONFIG_HOME"] = str(tmp / "config")
    env["AGENTLS_DATA_DIR"] = str(tmp / "data")
    env["ANTHROPIC_API_KEY"] = "bench-key"
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
    env.update(extra)
    return env


@contextlib.contextmanager
def temp_dir(prefix: str) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix=f"agentls-bench-{prefix}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# ---- measured processes -----------------------------------------------------------------------


@dataclass
class ProcResult:
    wall_s: float
    max_rss_kib: int
    cpu_s: float
    returncode: int
    stdout_path: Path | None = None
    stderr: str = ""

    @property
    def rss_mib(self) -> float:
        return self.max_rss_kib / 1024


def run_measured(
    cmd: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path | str | None = None,
    stdout_path: Path | None = None,
    timeout: float = 300.0,
    check: bool = True,
) -> ProcResult:
    """Run a whole process; wall time from just before fork to its exit (perf_counter), peak RSS
    and CPU time from wait4()'s rusage (what /usr/bin/time -v reports, without its 10 ms
    resolution)."""
    out = open(stdout_path, "wb") if stdout_path is not None else subprocess.DEVNULL  # noqa: SIM115
    err = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd), env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        timer = threading.Timer(timeout, lambda: _kill(proc.pid))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    finally:
        if stdout_path is not None and not isinstance(out, int):
            out.close()
        err.close()
    result = ProcResult(
        wall_s=wall,
        max_rss_kib=int(usage.ru_maxrss),
        cpu_s=usage.ru_utime + usage.ru_stime,
        returncode=proc.returncode,
        stdout_path=stdout_path,
        stderr=stderr,
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}... exited {result.returncode}:\n{stderr[-3000:]}")
    return result


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def proc_cpu_s(pid: int) -> float:
    """utime + stime of a running process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    fields = stat[stat.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def proc_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# ---- the local Messages-API server -------------------------------------------------------------


@dataclass
class ApiServer:
    url: str
    proc: subprocess.Popen[bytes]
    cpu_at_start: float = 0.0

    def control(self, path: str, payload: Any = None, timeout: float = 60) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        req = urllib.request.Request(
            self.url + path,
            data=data,
            method="GET" if data is None else "POST",
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read())

    def enqueue(self, replies: list[Any]) -> None:
        self.control("/_test/enqueue", replies)

    def requests(self) -> list[dict[str, Any]]:
        return [r for r in self.control("/_test/requests") if r["path"] == "/v1/messages"]

    def cpu_s(self) -> float:
        """CPU the server spent since it was ready."""
        return proc_cpu_s(self.proc.pid) - self.cpu_at_start


@contextlib.contextmanager
def api_server(tmp: Path, record: Path | None = None) -> Iterator[ApiServer]:
    """tests/support/messages_api.py in subprocess mode (validation on, as in the tests)."""
    cmd = [PYTHON, "-m", "tests.support.messages_api", "--port", "0"]
    if record is not None:
        cmd += ["--record", str(record)]
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=child_env(tmp),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()
        if not line.startswith("READY "):
            raise RuntimeError(f"messages_api did not start: {line!r}")
        server = ApiServer(url=line.split(" ", 1)[1], proc=proc)
        server.cpu_at_start = proc_cpu_s(proc.pid)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---- machine facts and results ------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gib = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    versions: dict[str, str] = {}
    from importlib import metadata

    for dist in ("anthropic", "pygls", "pydantic", "aiosqlite", "ripgrep"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[dist] = metadata.version(dist)
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "mem_gib": mem_gib,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "versions": versions,
        "commit": commit,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "taken_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


@dataclass
class Figure:
    """One row of the README table."""

    name: str
    value: float
    unit: str
    floor: float | None = None  # the same figure for the floor, when there is one
    ratio: float | None = None
    target: str = ""
    met: bool | None = None
    note: str = ""


@dataclass
class BenchResult:
    name: str
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    # The machine is shared: the load averages around the run say how quiet it was.
    load_before: list[float] = field(default_factory=lambda: [round(x, 2) for x in os.getloadavg()])

    def add(self, figure: Figure) -> Figure:
        self.figures.append(figure)
        return figure

    def write(self) -> Path:
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"{self.name}.json"
        data = {
            "benchmark": self.name,
            "machine": machine(),
            "load_avg_before": self.load_before,
            "runs": runs(),
            "figures": [asdict(f) for f in self.figures],
            "details": self.details,
        }
        path.write_text(json.dumps(data, indent=1) + "\n")
        return path

    def print(self) -> None:
        print(f"\n== {self.name} ==")
        for f in self.figures:
            floor = f"  floor {fmt(f.floor, f.unit)}" if f.floor is not None else ""
            rat = f"  ratio {f.ratio:.2f}x" if f.ratio is not None else ""
            met = {True: "  [met]", False: "  [MISSED]", None: ""}[f.met]
            target = f"  target {f.target}" if f.target else ""
            print(f"  {f.name:<46} {fmt(f.value, f.unit):>12}{floor}{rat}{target}{met}")
            if f.note:
                print(f"      {f.note}")


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "ms":
        return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"
    if unit == "MiB":
        return f"{value:.1f} MiB"
    if unit == "/s":
        return f"{value:.1f}/s"
    if unit == "us":
        return f"{value:.1f} µs"
    return f"{value:g} {unit}".strip()


def log(message: str) -> None:
    print(f"  .. {message}", flush=True)


def warm_bytecode(tmp: Path) -> None:
    """Fill the byte-code cache for agentls, the SDK and the helpers, outside any timing."""
    env = child_env(tmp)
    code = (
        "import anthropic, pygls.lsp.server, lsprotocol.types, aiosqlite, pydantic, watchfiles;"
        "import agentls.cli.main, agentls.lsp.server, agentls.session.agent, "
        "agentls.model.anthropic_provider, agentls.store, tests.support.messages_api"
    )
    subprocess.run([PYTHON, "-c", code], env=env, cwd=REPO, check=True)
