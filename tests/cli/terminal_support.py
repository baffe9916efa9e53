"""`agentls run` at a pseudo-terminal (stdin and stderr), answering its questions as a person
would: the tests of the CLI's questions share it."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time


def answer_at_terminal(
    args: list[str], environment: dict[str, str], prompt: bytes, keys: bytes, *, each: bool = False
) -> tuple[int, str]:
    """Run `agentls ARGS`; type `keys` once `prompt` is on screen (`each`: every time it shows
    again). Returns the exit code and what the terminal showed. A hang fails after a minute
    instead of blocking the suite."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls.cli.main", *args],
        env=environment,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    shown = b""
    answered = 0
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the process closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if shown.count(prompt) > answered and (each or answered == 0):
                os.write(master, keys)
                answered += 1
            if proc.poll() is not None and not ready:
                break
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        assert proc.stdout is not None
        proc.stdout.close()
        os.close(master)
    return code, shown.decode(errors="replace").replace("\r\n", "\n")
