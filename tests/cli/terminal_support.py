"""`agentls run` at a pseudo-terminal (stdin and stderr), answering its questions as a person
would: the tests of the CLI's questions share it."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable


def answer_at_terminal(
    args: list[str], environment: dict[str, str], prompt: bytes, keys: bytes, *, each: bool = False
) -> tuple[int, str]:
    """Run `agentls ARGS`; type `keys` once `prompt` is on screen (`each`: every time it shows
    again). Returns the exit code and what the terminal showed."""
    answered = 0

    def respond(shown: bytes) -> bytes | None:
        nonlocal answered
        if shown.count(prompt) > answered and (each or answered == 0):
            answered += 1
            return keys
        return None

    return respond_at_terminal(args, environment, respond)


def respond_at_terminal(
    args: list[str], environment: dict[str, str], respond: Callable[[bytes], bytes | None]
) -> tuple[int, str]:
    """Run `agentls ARGS` with stdin and stderr on a pseudo-terminal; type what `respond` gives
    for what the terminal showed so far (asked again and again; None: nothing to type yet).
    Returns the exit code and what the terminal showed. A hang fails after a minute instead of
    blocking the suite."""
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
            keys = respond(shown)
            if keys is not None:
                os.write(master, keys)
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


class Terminal:
    """agentls with stdin, stdout and stderr all on one pseudo-terminal of 100x30, as a person
    runs it: `type` keys, `wait_for` text on screen, `screen` what it showed so far (the raw
    bytes, escapes and all). The process is killed at the end of the `with` if still running."""

    def __init__(self, args: list[str], environment: dict[str, str]) -> None:
        import fcntl
        import struct
        import termios

        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        # No cursor-position requests: this terminal does not answer them (a person's does).
        env = {**environment, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}
        env.pop("COLORTERM", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentls.cli.main", *args],
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
            start_new_session=True,
            # The pty is its controlling terminal: Ctrl+C there is SIGINT, as for a person.
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.shown = b""

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self.master)

    def _pump(self, seconds: float) -> None:
        ready, _, _ = select.select([self.master], [], [], seconds)
        if ready:
            try:
                self.shown += os.read(self.master, 65536)
            except OSError:  # the process closed the terminal
                time.sleep(seconds)

    def wait_for(self, text: str, after: int = 0, timeout: float = 60) -> int:
        """Wait until `text` shows (past byte `after`); where it starts. AssertionError with
        what was shown when it does not come in `timeout` seconds."""
        wanted = text.encode()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            where = self.shown.find(wanted, after)
            if where >= 0:
                return where
            self._pump(0.1)
        raise AssertionError(f"{text!r} never showed; the terminal showed:\n{self.text()}")

    def type(self, keys: str | bytes) -> None:
        os.write(self.master, keys.encode() if isinstance(keys, str) else keys)

    def exit_code(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._pump(0.1)
        return self.proc.wait(timeout=1)

    def text(self) -> str:
        return self.shown.decode(errors="replace").replace("\r\n", "\n")
