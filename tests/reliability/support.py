"""Shared pieces of the fault and abuse suite: the mode, the figures table, and a raw JSON-RPC
client for an `agentls serve` process that a test may kill at any moment."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# `make reliability-full` (AGENTLS_RELIABILITY=full) runs the heavy mode; `make test` the quick one.
FULL = os.environ.get("AGENTLS_RELIABILITY", "").lower() == "full"
MODE = "full" if FULL else "quick"


def runs(quick: int, full: int) -> int:
    """How many times to repeat something in this mode."""
    return full if FULL else quick


# ---- the figures table -------------------------------------------------------------------


@dataclass
class Row:
    what: str
    tried: int = 0
    survived: int = 0
    lost: int = 0
    notes: list[str] = field(default_factory=list)


class Figures:
    """What each test injected or tried, how often, what survived and what was lost. Printed at
    the end of the run (and written as JSON to $AGENTLS_RELIABILITY_REPORT when set)."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self.measures: dict[str, str] = {}
        self._lock = threading.Lock()

    def row(self, what: str) -> Row:
        with self._lock:
            return self.rows.setdefault(what, Row(what))

    @contextmanager
    def case(self, what: str) -> Iterator[None]:
        """One attempt: counted as survived when the block passes, lost when it raises."""
        row = self.row(what)
        row.tried += 1
        try:
            yield
        except BaseException:
            row.lost += 1
            raise
        row.survived += 1

    def add(self, what: str, tried: int, survived: int, note: str | None = None) -> None:
        row = self.row(what)
        row.tried += tried
        row.survived += survived
        row.lost += tried - survived
        if note:
            row.notes.append(note)

    def measure(self, name: str, value: str) -> None:
        self.measures[name] = value

    def table(self) -> str:
        lines = [
            f"reliability figures ({MODE} mode)",
            "| what was injected or tried | times | survived | lost |",
            "|---|---:|---:|---:|",
        ]
        for row in self.rows.values():
            what = row.what + (f" ({'; '.join(row.notes)})" if row.notes else "")
            lines.append(f"| {what} | {row.tried} | {row.survived} | {row.lost} |")
        for name, value in self.measures.items():
            lines.append(f"{name}: {value}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": MODE,
            "rows": [
                {
                    "what": r.what,
                    "tried": r.tried,
                    "survived": r.survived,
                    "lost": r.lost,
                    "notes": r.notes,
                }
                for r in self.rows.values()
            ],
            "measures": self.measures,
        }


FIGURES = Figures()


# ---- SQLite ------------------------------------------------------------------------------


def integrity(db: Path) -> tuple[str, str]:
    """(PRAGMA integrity_check, journal_mode) of a database no process has open any more."""
    conn = sqlite3.connect(db)
    try:
        check = "; ".join(str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall())
        mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
        return check, mode
    finally:
        conn.close()


# ---- a raw client for `agentls serve` -----------------------------------------------------


def serve_env(data: Path, api_url: str | None, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        AGENTLS_DATA_DIR=str(data),
        XDG_CONFIG_HOME=str(data / "config"),
        ANTHROPIC_API_KEY="test-key",
    )
    if api_url is not None:
        env["ANTHROPIC_BASE_URL"] = api_url
    env.pop("AGENTLS_MODEL", None)
    env.update(extra)
    return env


class ServerGone(Exception):
    """The server closed its output (it exited or was killed)."""


class Serve:
    """`agentls serve` over pipes, by hand: a reader thread collects answers and agent/event
    notifications, answers every server-to-client request (with null), and never blocks the test
    for longer than the timeout it is given."""

    def __init__(
        self,
        workspace: Path,
        env: dict[str, str],
        *,
        stderr: Path | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.workspace = workspace
        self._stderr = open(stderr, "ab") if stderr is not None else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentls.cli.main", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=workspace,
        )
        self.events: list[dict[str, Any]] = []
        self.event_times: list[float] = []
        self.notifications: list[dict[str, Any]] = []
        self.on_event = on_event
        self._answers: dict[Any, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._next_id = 0
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- transport ------------------------------------------------------------------------

    def send_bytes(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def _read_loop(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                header = out.readline()
                if not header:
                    break
                length = int(header.split(b":")[1])
                while out.readline() not in (b"\r\n", b"\n", b""):
                    pass
                message = json.loads(out.read(length))
                self._dispatch(message)
        except (OSError, ValueError):
            pass
        finally:
            with self._cond:
                self._closed = True
                self._cond.notify_all()

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is not None and "id" in message:
            # A request from the server (applyEdit, showMessageRequest, progress): answer null.
            try:
                self.send({"id": message["id"], "result": None})
            except (OSError, ValueError):
                pass
            return
        if method == "agent/event":
            now = time.monotonic()
            with self._cond:
                self.events.append(message["params"])
                self.event_times.append(now)
                self._cond.notify_all()
            if self.on_event is not None:
                self.on_event(message["params"])
            return
        if method is not None:
            with self._cond:
                self.notifications.append(message)
            return
        msg_id = message.get("id")
        if not isinstance(msg_id, int | float | str | None):
            msg_id = json.dumps(msg_id)  # an id the server was sent as an array or object
        with self._cond:
            self._answers[msg_id] = message
            self._cond.notify_all()

    # -- requests -------------------------------------------------------------------------

    def new_id(self) -> int:
        with self._cond:
            self._next_id += 1
            return self._next_id

    def start(self, method: str, params: Any) -> int:
        msg_id = self.new_id()
        self.send({"id": msg_id, "method": method, "params": params})
        return msg_id

    def answer(self, msg_id: Any, timeout: float = 20.0) -> dict[str, Any]:
        """The response to request msg_id (with "result" or "error")."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while msg_id not in self._answers:
                if self._closed:
                    raise ServerGone(f"the server exited before answering request {msg_id}")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no answer to request {msg_id} within {timeout} s")
                self._cond.wait(remaining)
            return self._answers.pop(msg_id)

    def request(self, method: str, params: Any, timeout: float = 20.0) -> dict[str, Any]:
        return self.answer(self.start(method, params), timeout)

    def call(self, method: str, params: Any, timeout: float = 20.0) -> Any:
        """The result of a request that must succeed."""
        response = self.request(method, params, timeout)
        assert "result" in response, f"{method} failed: {response.get('error')}"
        return response["result"]

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def initialize(self, agent: dict[str, Any], capabilities: dict[str, Any] | None = None) -> Any:
        result = self.call(
            "initialize",
            {
                "processId": None,
                "rootUri": self.workspace.as_uri(),
                "capabilities": capabilities or {},
                "initializationOptions": {"agent": agent},
            },
        )
        self.notify("initialized", {})
        return result

    def wait_events(
        self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float = 30.0
    ) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self.events):
                if self._closed:
                    raise ServerGone("the server exited")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("the events waited for did not come")
                self._cond.wait(remaining)

    def session_events(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        with self._cond:
            return [
                e
                for e in self.events
                if e.get("sessionId") == session_id and (kind is None or e.get("type") == kind)
            ]

    # -- the process ----------------------------------------------------------------------

    def alive(self) -> bool:
        return self.proc.poll() is None

    def peak_rss_kb(self) -> int:
        return _status_kb(self.proc.pid, "VmHWM")

    def reset_peak_rss(self) -> int:
        """Reset the server's VmHWM to its current RSS (Linux clear_refs); returns that RSS."""
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")
        return self.rss_kb()

    def rss_kb(self) -> int:
        return _status_kb(self.proc.pid, "VmRSS")

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self._close_pipes()

    def stop(self, timeout: float = 10.0) -> None:
        """shutdown + exit, as an editor does; killed if it does not go."""
        if self.alive():
            try:
                self.request("shutdown", None, timeout)
                self.notify("exit", None)
                self.proc.wait(timeout)
            except (ServerGone, TimeoutError, OSError, ValueError, subprocess.TimeoutExpired):
                pass
        if self.alive():
            self.proc.kill()
            self.proc.wait(10)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        if hasattr(self._stderr, "close"):
            self._stderr.close()  # type: ignore[union-attr]
        self._reader.join(5)


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)
