"""Run one command and report its wall time, peak RSS and CPU time as JSON on a file descriptor.

    python -S -E bench/launch.py FD TIMEOUT_S COMMAND [ARG...]

Why a launcher: a process's peak RSS (ru_maxrss) starts at the RSS of the process it was forked
from (Linux carries the pre-exec high-water mark over exec). Forked from a benchmark process
that holds the SDK and a long session, every child would "peak" at 100+ MiB. This launcher is a
fresh small interpreter; the command it forks starts from its few MiB, so wait4() reports the
command's own peak, as /usr/bin/time does. Standard library only; stdin, stdout and stderr pass
through to the command.
"""

import json
import os
import signal
import subprocess
import sys
import time


def main() -> int:
    fd, timeout, cmd = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, pass_fds=())

    def on_alarm(signum: int, frame: object) -> None:
        proc.kill()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    signal.setitimer(signal.ITIMER_REAL, 0)
    code = os.waitstatus_to_exitcode(status)
    report = {
        "wall_s": wall,
        "max_rss_kib": usage.ru_maxrss,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "returncode": code,
    }
    os.write(fd, json.dumps(report).encode())
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
