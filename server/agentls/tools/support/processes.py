"""Process groups: whether one still runs, and ending one (SIGTERM, then SIGKILL after a grace)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path


def _group_members_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies don't count)."""
    proc_dir = Path("/proc")
    if proc_dir.is_dir():
        try:
            entries = os.listdir(proc_dir)
        except OSError:
            entries = []
        if entries:
            for entry in entries:
                if not entry.isdigit():
                    continue
                try:
                    stat = (proc_dir / entry / "stat").read_text()
                except OSError:
                    continue
                # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
                fields = stat[stat.rfind(")") + 2 :].split()
                if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
                    return True
            return False
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def kill_process_group(pgid: int, grace: float) -> None:
    """SIGTERM the whole group, then SIGKILL whatever is still running after `grace` seconds."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    gone = False
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while loop.time() < deadline:
            if not _group_members_alive(pgid):
                gone = True
                break
            await asyncio.sleep(0.05)
    finally:
        # Also reached when we are cancelled while waiting: never leave the group behind.
        # (Not once it is gone: the id could in principle be reused by then.)
        if not gone:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
