"""The supervisor of one bash call: every process the call starts ends with it.

Run as `python -I -S supervise.py REPORT_FD -- COMMAND...` (the standard library only, so it
starts in ~20 ms without site-packages). It makes itself a child subreaper (Linux
PR_SET_CHILD_SUBREAPER), so whatever the command starts and then abandons (setsid, a double fork,
`nohup ... & disown`, a daemon that closes its output) is re-parented to it and stays its
descendant. It runs the command and waits for it; then (or when it receives SIGTERM, SIGINT or
SIGHUP, or its parent dies) it stops every descendant still running: SIGTERM, then SIGKILL after
a short grace, again and again until none is left, reaping each. Last it writes a JSON report to
REPORT_FD (not inherited by the command, so the command cannot forge it):
`{"stopped": ["sleep 300", ...], "count": N, "left": M}` (what was stopped besides the command
itself; left: what could not be stopped), and exits with the command's status (by the same
signal when the command was killed by one).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
# Seconds between SIGTERM and SIGKILL for what the command left behind.
GRACE = 0.5
_ROUNDS = 2000
_NAMES_KEPT = 20
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Stop(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, frame: object) -> None:
    raise _Stop(signum)


_DEAD = ("Z", "X")


def _processes() -> dict[int, tuple[int, str]]:
    """Every process this /proc shows: pid -> (ppid, state)."""
    return {pid: (ppid, state) for pid, (ppid, state, _, _) in _stat_table().items()}


def descendants(root: int) -> dict[int, str]:
    """Every descendant of root, zombies included: pid -> state."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, str] = {}
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        if pid in found or pid == root:
            continue
        found[pid] = table[pid][1]
        todo.extend(children.get(pid, ()))
    return found


def describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = [w.decode("utf-8", "replace") for w in f.read().split(b"\0") if w]
    except OSError:
        words = []
    if not words:
        try:
            with open(f"/proc/{pid}/comm", "rb") as f:
                words = [f.read().decode("utf-8", "replace").strip()]
        except OSError:
            words = ["?"]
    words[0] = os.path.basename(words[0])
    text = " ".join(words)
    return text if len(text) <= 60 else text[:57] + "..."


def _reap(statuses: dict[int, int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = status


def stop_all(main: int, statuses: dict[int, int]) -> tuple[list[str], int]:
    """Stop every descendant; (the ones stopped, main excluded, described; how many are left)."""
    stopped: dict[int, str] = {}
    sig = signal.SIGTERM
    deadline = time.monotonic() + GRACE
    alive: dict[int, str] = {}
    for _ in range(_ROUNDS):
        _reap(statuses)
        tree = descendants(os.getpid())
        alive = {pid: state for pid, state in tree.items() if state not in _DEAD}
        # Done only when the tree is empty, zombies included: a process that forked and died
        # while /proc was being read shows as a zombie, and its child (created after the
        # listing) is ours only once the zombie is reaped; the next round sees it.
        if not tree:
            break
        for pid in alive:
            if pid != main and pid not in stopped and len(stopped) < 10_000:
                stopped[pid] = describe(pid)
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        if sig == signal.SIGTERM and time.monotonic() >= deadline:
            sig = signal.SIGKILL
        time.sleep(0.01)
    _reap(statuses)
    return list(stopped.values()), len(alive)


def _stat_table() -> dict[int, tuple[int, str, int, int]]:
    """pid -> (ppid, state, session id, start time in clock ticks) of every process /proc
    shows."""
    table: dict[int, tuple[int, str, int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(entry)) is not None:
            table[int(entry)] = stat
    return table


def start_time(pid: int) -> int | None:
    """When pid started, in clock ticks since boot (None: it is gone)."""
    entry = _stat(pid)
    return None if entry is None else entry[3]


def _stat(pid: int | str) -> tuple[int, str, int, int] | None:
    """(ppid, state, session id, start time in clock ticks) of one process; None: it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    return (int(fields[1]), fields[0].decode("ascii", "replace"), int(fields[3]), int(fields[19]))


def _carries(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read().split(b"\0")
    except OSError:
        return False


def _add_descendants(
    targets: set[int], table: dict[int, tuple[int, str, int, int]], me: int
) -> None:
    """Every living descendant of the targets (but this process) becomes a target too."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    todo = list(targets)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in targets and child != me and table[child][1] not in _DEAD:
                targets.add(child)
                todo.append(child)


def _kill_all(
    targets: set[int],
    table: dict[int, tuple[int, str, int, int]],
    me: int,
    stopped: dict[int, str],
    ours: set[int],
) -> None:
    """SIGKILL each target, described first (into `stopped`); our children among them go into
    `ours`, to be reaped."""
    for pid in targets:
        stopped.setdefault(pid, describe(pid))
        if table[pid][0] == me:
            ours.add(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def sweep_call(
    session: int,
    keep: int,
    *,
    marker: bytes | None = None,
    adopted_since: int | None = None,
    protected: frozenset[int] = frozenset(),
) -> list[str]:
    """The server's side, after a call's supervisor (pid `keep`, which asyncio reaps) is gone:
    stop what is left of the call with SIGKILL, with their descendants, and reap those that
    became our children. What is left: the processes of its session; with marker (NAME=VALUE),
    those whose environment carries it; with adopted_since (the supervisor's start time), every
    child of ours started since then that is not in our own session (rg and the like are) nor
    in `protected` (the supervisors of other calls running now): an orphan a subreaper server
    adopted, which only a call can have left. Returns what was stopped, described."""
    if not os.path.isdir("/proc/self"):
        return []
    me = os.getpid()
    my_session = os.getsid(0)
    stopped: dict[int, str] = {}
    ours: set[int] = set()
    dead: set[int] = set()  # zombies seen: each is worth one more look
    for _ in range(200):
        table = _stat_table()
        targets: set[int] = set()
        # A zombie of the call may have forked a child after /proc was listed: reap it (when
        # ours) and look once more.
        unsettled = False
        for pid, (ppid, state, sid, started) in table.items():
            if pid == me or pid == keep or pid in protected:
                continue
            adopted = (
                adopted_since is not None
                and ppid == me
                and sid != my_session
                and started >= adopted_since
            )
            if state in _DEAD:
                if (sid == session or adopted or pid in ours) and pid not in dead:
                    dead.add(pid)
                    unsettled = True
                    if ppid == me:
                        ours.add(pid)
                continue
            if sid == session or adopted or (marker is not None and _carries(pid, marker)):
                targets.add(pid)
        _add_descendants(targets, table, me)
        if not targets:
            if not unsettled:
                break
            _reap_ours(ours)
            time.sleep(0.01)
            continue
        _kill_all(targets, table, me, stopped, ours)
        time.sleep(0.01)
    for _ in range(100):
        if not _reap_ours(ours):
            break
        time.sleep(0.01)
    return list(stopped.values())


def _reap_ours(ours: set[int]) -> bool:
    """Reap those of ours that have ended (taking them out of the set); whether any are left."""
    for pid in list(ours):
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                continue
        except ChildProcessError:
            pass
        ours.discard(pid)
    return bool(ours)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: supervise.py REPORT_FD -- COMMAND...\n")
        return 2
    report_fd = int(argv[1])
    command = argv[3:]
    os.set_inheritable(report_fd, False)
    if not sys.platform.startswith("linux"):
        # No subreaper nor /proc: the command runs as it would without us (no report).
        os.execvp(command[0], command)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no core file from the re-raised signal below
    for sig in _STOP_SIGNALS:
        signal.signal(sig, _on_signal)
    main_pid = os.fork()
    if main_pid == 0:
        try:
            for sig in _STOP_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            os.execvp(command[0], command)
        except BaseException as exc:  # noqa: BLE001 - the child must never return
            os.write(2, f"agentls: cannot run {command[0]}: {exc}\n".encode())
        os._exit(127)
    statuses: dict[int, int] = {}
    stopped_by: int | None = None
    try:
        while main_pid not in statuses:
            pid, status = os.waitpid(-1, 0)
            statuses[pid] = status
    except _Stop as stop:
        stopped_by = stop.signum
    except ChildProcessError:
        pass
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    stopped, left = stop_all(main_pid, statuses)
    report = {"stopped": stopped[:_NAMES_KEPT], "count": len(stopped), "left": left}
    try:
        os.write(report_fd, json.dumps(report).encode())
        os.close(report_fd)
    except OSError:
        pass
    final = statuses.get(main_pid)
    kill_with: int | None = stopped_by
    if final is not None and os.WIFSIGNALED(final):
        kill_with = kill_with or os.WTERMSIG(final)
    if kill_with is not None:
        try:
            signal.signal(kill_with, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL and SIGSTOP keep their action anyway
            pass
        os.kill(os.getpid(), kill_with)
        return 128 + kill_with
    if final is None:
        return 127
    return os.waitstatus_to_exitcode(final)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
