"""Session locks (agentls.store.session_locks): when a holder counts as gone."""

from __future__ import annotations

import subprocess
import time

from agentls.store import session_locks
from agentls.store.session_locks import Holder


def holder_of(pid: int) -> Holder:
    return Holder(
        "agent",
        pid,
        session_locks._host(),
        session_locks._boot_id(),
        session_locks.process_start(pid) or 0,
        0,
    )


def test_an_exited_holder_not_yet_reaped_is_gone() -> None:
    # A detached run whose parent has gone is reaped by init, or never (an init that does not
    # reap): either way its lock must not block the session.
    proc = subprocess.Popen(["sh", "-c", "sleep 30"])
    try:
        holder = holder_of(proc.pid)
        assert session_locks.is_alive(holder)
        proc.kill()
        deadline = time.monotonic() + 10
        while not session_locks._zombie(proc.pid):  # killed, still unreaped by this process
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not session_locks.is_alive(holder)
    finally:
        proc.kill()
        proc.wait()
