"""Shared plumbing for the benchmarks: processes measured with wait4(), the local Messages-API
server as a subprocess, statistics, machine facts and the JSON results.

Every child process (agentls, the floors, the servers) gets the same environment:

* ``PYTHONDONTWRITEBYTECODE`` removed and ``PYTHONPYCACHEPREFIX`` set to ``bench/results/pycache``,
  so that byte code is cached as on a normal install (an editable install with byte-code writing
  off would recompile agentls at every start) without writing into the source tree;
* ``XDG_CONFIG_HOME`` and ``AGENTLS_DATA_DIR`` in a temporary directory, so no user configuration,
  rules file or database takes part.

The machine may be shared: before each measurement, quiet() waits (10 s at most, 40 s per
benchmark) until other processes leave the cores at least 80% idle, and ratios are medians of
per-round ratios (agentls and its floor run back to back in each round), so a load that comes and
goes cancels out.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
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


def paired_ratio(a: Sequence[float], b: Sequence[float]) -> float:
    """Median of a[i] / b[i]: each pair was measured back to back, so a load that drifts across
    the rounds (the machine is shared) cancels within a pair."""
    return round(median([x / y for x, y in zip(a, b, strict=True) if y]), 3)


# ---- a quiet machine ---------------------------------------------------------------------------

QUIET_BUSY = 0.2  # at most this share of all cores busy with other work
QUIET_MAX_WAIT_S = 10.0  # per measurement
QUIET_BUDGET_S = 40.0  # per benchmark; after that, measurements go ahead without waiting
waited: list[float] = []  # how long each quiet() waited, for the results
noisy: list[float] = []  # the busy share when a wait gave up (the measurement shared the cores)


def reset_quiet() -> None:
    waited.clear()
    noisy.clear()


def _cpu_times() -> tuple[int, int]:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields[:8]), idle


def cpu_counters() -> tuple[int, int] | None:
    """(the machine's busy time, the time stolen by the hypervisor) so far, in clock ticks, from
    /proc/stat; None where it cannot be read."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 8:
        return None
    idle = fields[3] + fields[4]
    return sum(fields[:8]) - idle, fields[7]


def steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of the busy time between two cpu_counters() that the hypervisor took for other
    machines (this one is a VM sharing its host: its cores run slower when that share is high)."""
    if before is None or after is None or after[0] <= before[0]:
        return None
    return (after[1] - before[1]) / (after[0] - before[0])


def quiet(window_s: float = 0.3) -> float:
    """Wait until the other processes on the machine leave its cores mostly idle for one window,
    so that a measurement does not share them (QUIET_MAX_WAIT_S at most, QUIET_BUDGET_S in all
    per benchmark); returns the wait."""
    started = time.monotonic()
    limit = min(QUIET_MAX_WAIT_S, max(0.0, QUIET_BUDGET_S - sum(waited)))
    busy = 0.0
    with contextlib.suppress(OSError, ValueError, IndexError):
        while True:
            total0, idle0 = _cpu_times()
            time.sleep(window_s)
            total1, idle1 = _cpu_times()
            busy = 1 - (idle1 - idle0) / max(1, total1 - total0)
            if busy <= QUIET_BUSY:
                break
            if time.monotonic() - started >= limit:
                noisy.append(round(busy, 2))
                break
    took = time.monotonic() - started
    waited.append(took)
    return took


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
def inprocess_env(tmp: Path, url: str) -> Iterator[None]:
    """This process's environment pointed at the local server (an isolated config home, a bench
    key) for an in-process measurement; put back as it was afterwards."""
    values = {
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "ANTHROPIC_API_KEY": "bench-key",
        "ANTHROPIC_BASE_URL": url,
    }
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


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
    """Run a whole process through bench/launch.py: wall time from its fork to its exit
    (perf_counter), peak RSS and CPU time from wait4()'s rusage, as /usr/bin/time -v reports
    them (without its 10 ms resolution, and without the peak RSS this big process would pass on
    to a child it forked itself)."""
    out = open(stdout_path, "wb") if stdout_path is not None else subprocess.DEVNULL  # noqa: SIM115
    err = tempfile.TemporaryFile()  # noqa: SIM115
    read_fd, write_fd = os.pipe()
    try:
        launcher = [PYTHON, "-S", "-E", str(REPO / "bench" / "launch.py"), str(write_fd)]
        proc = subprocess.Popen(
            [*launcher, str(timeout), *cmd],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            pass_fds=(write_fd,),
        )
        os.close(write_fd)
        write_fd = -1
        with os.fdopen(read_fd, "rb") as reports:
            read_fd = -1
            raw = reports.read()
        proc.wait(timeout + 30)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    finally:
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
        if stdout_path is not None and not isinstance(out, int):
            out.close()
        err.close()
    if not raw:
        raise RuntimeError(f"bench/launch.py reported nothing for {cmd[:3]}:\n{stderr[-3000:]}")
    report = json.loads(raw)
    result = ProcResult(
        wall_s=report["wall_s"],
        max_rss_kib=int(report["max_rss_kib"]),
        cpu_s=report["cpu_s"],
        returncode=report["returncode"],
        stdout_path=stdout_path,
        stderr=stderr,
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}... exited {result.returncode}:\n{stderr[-3000:]}")
    return result


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
    """messages_api/ in subprocess mode (validation on, as in the tests)."""
    cmd = [PYTHON, "-m", "messages_api", "--port", "0"]
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
    """One row of the table in docs/benchmarks.md."""

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
    # Measured runs (rounds) per figure, when a benchmark takes more than runs().
    rounds: int | None = None

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
            "runs": self.rounds or runs(),
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
    if unit == "check":
        return "all" if value else "no"
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
        "agentls.model.anthropic_provider, agentls.store, messages_api"
    )
    subprocess.run([PYTHON, "-c", code], env=env, cwd=REPO, check=True)
