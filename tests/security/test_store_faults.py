"""Store faults: a data directory or database that cannot be used gives one clear line naming the
path and what to do, exit code 1 and no traceback, from `agentls run` and `agentls sessions`; and
`agentls serve` answers agent requests with a JSON-RPC error saying it (and a window/showMessage),
without a traceback on its stderr. Each case is a real process on a real broken data directory:
garbage bytes, a damaged database, a read-only file or directory (for root too: a read-only bind
mount), a full disk (a tiny tmpfs filled up, as root), a database another process holds an
exclusive lock on, and a data directory that cannot be created."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentls.store import Store
from messages_api import MessagesAPIServer, reply, text
from tests.conftest import HarnessFactory
from tests.reliability.support import Serve
from tests.security.conftest import SecurityFigures
from tests.security.fault_support import (
    agentls,
    agentls_env,
    fill,
    one_line_error,
    read_only,
    tmpfs,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux mounts")


@dataclass
class Fault:
    data: Path  # AGENTLS_DATA_DIR
    says: str  # what the error line must say
    names: Path  # the path it must name


def make_database(db: Path) -> None:
    """A valid database with one session, closed (its WAL checkpointed away)."""

    async def create() -> None:
        store = await Store.open(db)
        try:
            await store.create_session("before the fault", "/w", "m")
        finally:
            await store.close()

    asyncio.run(create())


def damage(db: Path) -> None:
    """Keep the header page, overwrite every later page."""
    data = bytearray(db.read_bytes())
    assert len(data) > 8192
    data[4096:] = b"\x5a" * (len(data) - 4096)
    db.write_bytes(bytes(data))


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("CREATE TABLE IF NOT EXISTS held (x)")
print("locked", flush=True)
time.sleep(600)
"""


@contextlib.contextmanager
def fault(kind: str, tmp_path: Path) -> Iterator[Fault]:
    data = tmp_path / "data"
    db = data / "agentls.db"
    if kind == "not a database":
        data.mkdir()
        db.write_bytes(os.urandom(8192))
        yield Fault(data, "is not an agentls database", db)
    elif kind == "corrupt database":
        make_database(db)
        damage(db)
        yield Fault(data, "is damaged", db)
    elif kind == "read-only database file":
        make_database(db)
        with read_only(db):
            yield Fault(data, "is read-only", db)
    elif kind == "read-only data directory":
        make_database(db)
        with read_only(data):
            yield Fault(data, "is not writable", data)
    elif kind == "read-only data directory, no database yet":
        data.mkdir()
        with read_only(data):
            yield Fault(data, "is not writable", data)
    elif kind == "full disk":
        with tmpfs(data, "1m"):
            make_database(db)
            fill(data)
            yield Fault(data, "the disk is full", db)
    elif kind == "full disk, no database yet":
        with tmpfs(data, "64k"):
            fill(data)
            yield Fault(data, "the disk is full", db)
    elif kind == "locked database":
        make_database(db)
        locker = subprocess.Popen(
            [sys.executable, "-c", LOCKER, str(db)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
            yield Fault(data, "is locked by another process", db)
        finally:
            locker.kill()
            locker.wait()
    elif kind == "data directory under a file":
        (tmp_path / "afile").write_text("not a directory")
        data = tmp_path / "afile" / "agentls"
        yield Fault(data, "is a file, not a directory", data)
    elif kind == "data directory under a read-only directory":
        parent = tmp_path / "parent"
        parent.mkdir()
        data = parent / "agentls"
        with read_only(parent):
            yield Fault(data, "cannot create the data directory", data)
    else:
        raise AssertionError(kind)


FAULTS = [
    "not a database",
    "corrupt database",
    "read-only database file",
    "read-only data directory",
    "read-only data directory, no database yet",
    "full disk",
    "full disk, no database yet",
    "locked database",
    "data directory under a file",
    "data directory under a read-only directory",
]


# A read-only database can still be read: listing sessions works, writing fails clearly.
READS_WORK = {"read-only database file"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def check_line(line: str, found: Fault) -> None:
    assert found.says in line, line
    assert str(found.names) in line, line
    # What to do: every message offers a way out.
    assert "AGENTLS_DATA_DIR" in line or "Free some space" in line, line


@pytest.mark.parametrize("command", ["run", "sessions"])
@pytest.mark.parametrize("kind", FAULTS)
def test_cli_store_fault_is_one_line_and_exit_1(
    kind: str,
    command: str,
    tmp_path: Path,
    api: MessagesAPIServer,
    workspace: Path,
    security_figures: SecurityFigures,
) -> None:
    api.enqueue(reply(text("an answer no store can keep")))
    with security_figures.attempt("store fault"), fault(kind, tmp_path) as found:
        env = agentls_env(tmp_path, api, found.data)
        args = ["run", "--cwd", str(workspace), "hello"] if command == "run" else ["sessions"]
        proc = agentls(*args, env=env)
        if command == "sessions" and kind in READS_WORK:
            assert proc.returncode == 0, proc.stderr
            assert "before the fault" in proc.stdout and "Traceback" not in proc.stderr
            return
        assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
        check_line(one_line_error(proc.stderr), found)
        # Nothing reached the model: the store is checked before the turn starts.
        assert not api.requests


@pytest.mark.parametrize("kind", FAULTS)
def test_serve_answers_store_faults_with_an_error_and_no_traceback(
    kind: str,
    tmp_path: Path,
    api: MessagesAPIServer,
    workspace: Path,
    security_figures: SecurityFigures,
) -> None:
    stderr = tmp_path / "serve.stderr"
    with security_figures.attempt("store fault"), fault(kind, tmp_path) as found:
        server = Serve(workspace, agentls_env(tmp_path, api, found.data), stderr=stderr)
        try:
            server.initialize({"model": "claude-sonnet-5-5"})
            for method in ("agent/newSession", "agent/listSessions"):
                answer = server.request(method, {}, timeout=60)
                if method == "agent/listSessions" and kind in READS_WORK:
                    sessions = answer["result"]["sessions"]
                    assert sessions == [], sessions  # of this workspace: none
                    continue
                assert "error" in answer, answer
                assert answer["error"]["code"] == -32803, answer
                check_line(answer["error"]["message"], found)
            shown = [
                n["params"]["message"]
                for n in server.notifications
                if n.get("method") == "window/showMessage"
            ]
            # Told once when the store cannot even be opened; a refused write is the answer.
            assert len(shown) == (0 if kind in READS_WORK else 1), shown
            if shown:
                check_line(shown[0], found)
            assert server.alive()
        finally:
            server.stop()
        log = stderr.read_text()
        assert "Traceback" not in log, log


# ---- a full disk in the middle of a turn -----------------------------------------------------


@pytest.fixture
def data_on_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """The harness's data directory (tmp_path/data) on a 2 MB tmpfs, for the test to fill."""
    with tmpfs(tmp_path / "data", "2m") as data:
        yield data


async def test_a_full_disk_mid_turn_ends_the_turn_with_an_error_and_keeps_what_was_committed(
    data_on_tmpfs: Path,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    answer = "The answer streamed so far, and the rest of it after the disk filled up."
    hold = threading.Event()
    # Held after its first text delta: the disk fills while the answer streams.
    api.enqueue(reply(text(answer), hold=hold, hold_after=4, chunk_size=10))
    h = await make_harness()
    assert h.store.path.parent == data_on_tmpfs
    session = await h.agent.new_session()
    with security_figures.attempt("store fault"):
        turn = asyncio.create_task(h.agent.prompt(session.id, "answer me"))
        await h.wait_for("text-delta")
        filler = fill(data_on_tmpfs)
        hold.set()
        result = await asyncio.wait_for(turn, 60)
        assert result.finish_reason == "error"
        (error,) = h.of_type("error")
        assert error.message.startswith("the disk is full: "), error.message
        assert str(h.store.path) in error.message
        # Nothing streamed vanished: every delta was shown, then the error, then the turn's end.
        streamed = "".join(e.delta for e in h.of_type("text-delta"))
        assert streamed == answer and result.text == answer
        kinds = [e.type for e in h.events]
        last_delta = max(i for i, kind in enumerate(kinds) if kind == "text-delta")
        assert last_delta < kinds.index("error") < kinds.index("turn-end") == len(kinds) - 1
        # What was committed stays (the user's message, at least), on disk and in memory alike.
        filler.unlink()
        fresh = await Store.open(h.store.path)
        try:
            stored = await fresh.load_messages(session.id, repair=False)
        finally:
            await fresh.close()
        assert stored[0].role == "user" and stored[0].text() == "answer me"
        state = await h.agent.session(session.id)
        assert [m.id for m in state.messages] == [m.id for m in stored]
        # With space again, the session goes on.
        api.enqueue(reply(text("fine now")))
        again = await asyncio.wait_for(h.agent.prompt(session.id, "again"), 60)
        assert again.finish_reason == "end_turn" and again.text == "fine now"
