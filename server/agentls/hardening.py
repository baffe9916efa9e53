"""Process hardening for the server: its memory out of reach, and the processes its tools start
brought back to it.

- Non-dumpable (prctl PR_SET_DUMPABLE 0): another process of the same user can no longer read
  /proc/PID/mem, /proc/PID/environ or /proc/PID/maps of the server, nor ptrace it (gdb -p), so a
  bash command cannot read the API key out of the server's memory. Root keeps that power through
  CAP_SYS_PTRACE; so when the server runs as root it also drops CAP_SYS_PTRACE from its bounding
  and inheritable sets, which its children (bash commands) then never get. Root can still read
  the key by other means (/proc/kcore, a kernel module, a debugger started outside agentls).
- Child subreaper (prctl PR_SET_CHILD_SUBREAPER 1): a process a tool started that detaches
  (setsid, a double fork, nohup ... & disown) becomes the server's child when its parent exits,
  instead of init's, so it can still be found and stopped (see tools/support/supervise.py, which gives
  each bash call a subreaper of its own, and tools/bash.py).

Linux only; elsewhere every function does nothing and says so by its return value.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from functools import cache

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
CAP_SYS_PTRACE = 19


@cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def prctl(option: int, arg: int = 0) -> int | None:
    """prctl(option, arg, 0, 0, 0): its result, or None when it failed or is not available."""
    libc = _libc()
    if libc is None:
        return None
    result = int(libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0))
    return None if result < 0 else result


def make_non_dumpable() -> bool:
    """No ptrace, /proc/self/mem, /proc/self/environ or core dump of this process by others of its
    user. Note: /proc/self/mem then needs root to open even for this process, so
    environ_scrub.scrub_initial_environment must run first."""
    return prctl(PR_SET_DUMPABLE, 0) is not None and prctl(PR_GET_DUMPABLE) == 0


def drop_ptrace_capability() -> bool:
    """As root: CAP_SYS_PTRACE out of the bounding and inheritable sets, so no child (and no
    program it runs) ever holds it, and root children cannot read this process's memory past its
    non-dumpable flag. This process keeps it in its own permitted set (it never uses it). True
    when children will lack it (also when we are not root: they never had it)."""
    if os.geteuid() != 0:
        return True
    if prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE) is None:
        return False
    return _drop_inheritable(CAP_SYS_PTRACE)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_inheritable(cap: int) -> bool:
    libc = _libc()
    if libc is None:
        return False
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        return False
    data[cap // 32].inheritable &= ~(1 << (cap % 32)) & 0xFFFFFFFF
    return bool(libc.capset(ctypes.byref(header), data) == 0)


def become_subreaper() -> bool:
    """Orphaned descendants come back to this process instead of init (idempotent)."""
    if is_subreaper():
        return True
    return prctl(PR_SET_CHILD_SUBREAPER, 1) is not None


def is_subreaper() -> bool:
    libc = _libc()
    if libc is None:
        return False
    flag = ctypes.c_int(0)
    if libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) != 0:
        return False
    return flag.value == 1


def harden_server() -> dict[str, bool]:
    """At the start of `agentls run` / `agentls serve`, after the environment scrub: what held."""
    return {
        "non_dumpable": make_non_dumpable(),
        "no_ptrace_for_children": drop_ptrace_capability(),
        "subreaper": become_subreaper(),
    }
