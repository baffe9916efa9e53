"""Which process runs a turn of a session: a lock in the database (table session_locks), so two
agentls processes never interleave one history.

A turn takes its session's lock as it starts and lets go at its end (Agent._run_turn). A lock
whose holder is gone is stale and taken over: the holder's pid no longer runs, or runs another
program (its start time in /proc/<pid>/stat differs), or the machine has rebooted since (another
boot id). A kill -9'd holder never blocks a session for good. A holder on another host (a
database on a shared disk) cannot be checked, so it counts as alive.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import aiosqlite

from agentls.history import now_ms
from agentls.store.errors import StoreError

# Migration 5's statements (store/db.py MIGRATIONS): never edit them, append a new migration.
MIGRATION = (
    """
    CREATE TABLE session_locks (
        session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        -- Which Agent holds it (two agents of one process are two holders).
        owner TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        -- /proc/sys/kernel/random/boot_id and field 22 of /proc/<pid>/stat (clock ticks since
        -- boot): with the pid, they tell the holder from a later process given the same pid.
        boot_id TEXT NOT NULL,
        process_start INTEGER NOT NULL,
        started_at INTEGER NOT NULL
    )
    """,
)


@dataclass(frozen=True)
class Holder:
    owner: str
    pid: int
    host: str
    boot_id: str
    process_start: int
    started_at: int


class SessionLockedError(StoreError):
    """Another live agentls process (or another agent of this one) runs a turn of the session."""

    def __init__(self, session_id: str, holder: Holder, path: Path | None = None) -> None:
        if holder.pid == os.getpid() and holder.host == _host():
            where = f"another agent of this process (pid {holder.pid})"
        elif holder.host != _host():
            where = f"another agentls process (pid {holder.pid} on host {holder.host})"
        else:
            where = f"another agentls process (pid {holder.pid})"
        super().__init__(
            f"session {session_id} is busy in {where}; wait for its turn to end, or stop "
            "that process, then try again",
            path,
        )
        self.session_id = session_id
        self.holder = holder


@cache
def _host() -> str:
    return socket.gethostname()


@cache
def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def process_start(pid: int) -> int | None:
    """When the process started (clock ticks since boot), None when that cannot be read (no
    such process, or no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: fields follow the last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of the whole line
    except (IndexError, ValueError):
        return None


def _me(owner: str) -> Holder:
    pid = os.getpid()
    return Holder(owner, pid, _host(), _boot_id(), process_start(pid) or 0, now_ms())


def is_alive(holder: Holder) -> bool:
    """Whether the lock's holder may still run (True when it cannot be told)."""
    if holder.host != _host():
        return True
    if holder.boot_id and _boot_id() and holder.boot_id != _boot_id():
        return False
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it runs, as another user
    if _zombie(holder.pid):  # exited, not yet reaped (a detached run whose parent is gone)
        return False
    start = process_start(holder.pid)
    return not (start is not None and holder.process_start and start != holder.process_start)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].startswith("Z")


async def holder_of(conn: aiosqlite.Connection, session_id: str) -> Holder | None:
    rows = list(
        await conn.execute_fetchall(
            "SELECT owner, pid, host, boot_id, process_start, started_at FROM session_locks"
            " WHERE session_id = ?",
            (session_id,),
        )
    )
    if not rows:
        return None
    owner, pid, host, boot_id, start, started_at = rows[0]
    return Holder(str(owner), int(pid), str(host), str(boot_id), int(start), int(started_at))


async def acquire(
    conn: aiosqlite.Connection, session_id: str, owner: str, path: Path
) -> str | None:
    """Take the session's lock for `owner` (in the caller's write transaction); raises
    SessionLockedError when a live holder other than `owner` has it. A stale lock is taken over,
    and so is one `owner` already holds (a release that failed, e.g. on a full disk).

    Returns the id of the session's last stored message (None: none yet), read under the lock:
    a holder whose copy of the history ends elsewhere missed another process's turn."""
    holder = await holder_of(conn, session_id)
    if holder is not None and holder.owner != owner and is_alive(holder):
        raise SessionLockedError(session_id, holder, path)
    me = _me(owner)
    await conn.execute(
        "INSERT OR REPLACE INTO session_locks"
        " (session_id, owner, pid, host, boot_id, process_start, started_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, me.owner, me.pid, me.host, me.boot_id, me.process_start, me.started_at),
    )
    rows = list(
        await conn.execute_fetchall(
            "SELECT id FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT 1", (session_id,)
        )
    )
    return str(rows[0][0]) if rows else None


async def release(conn: aiosqlite.Connection, session_id: str, owner: str) -> None:
    """Let go of the session's lock if `owner` holds it (one statement: a transaction)."""
    await conn.execute(
        "DELETE FROM session_locks WHERE session_id = ? AND owner = ?", (session_id, owner)
    )
