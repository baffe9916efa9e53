"""docs/terminal.svg: what `agentls` shows in a terminal, taken from a real run.

agentls runs at a pseudo-terminal of 100x44 against the local Messages API (messages_api/) with
scripted replies: a question with a Markdown answer, an edit approved with one key, a table and a
code block. What it writes is played into a terminal emulator (pyte) and the final screen is saved
as SVG with rich. Needs the `docs` extra (pip install -e '.[docs]'):

    .venv/bin/python scripts/terminal_screenshot.py [OUT.svg]
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from messages_api import MessagesAPIServer, reply, text, tool_use  # noqa: E402

COLUMNS, LINES = 100, 44
CALC = """def mean(xs):
    return sum(xs) / len(xs)


def spread(xs):
    return max(xs) - min(xs)
"""
ANSWER = """Done. `mean` now refuses an empty list instead of dividing by zero:

| function | empty list | before |
|----------|------------|--------|
| `mean`   | `ValueError` | `ZeroDivisionError` |
| `spread` | unchanged  | `ValueError` |

```python
mean([])  # ValueError: mean of an empty list
```
"""


def replies() -> list[object]:
    old = "def mean(xs):\n    return sum(xs) / len(xs)"
    new = (
        "def mean(xs):\n    if not xs:\n"
        '        raise ValueError("mean of an empty list")\n    return sum(xs) / len(xs)'
    )
    return [
        reply(text("Let me look at **calc.py** first."), tool_use("read", {"path": "calc.py"})),
        reply(tool_use("edit", {"path": "calc.py", "old_string": old, "new_string": new})),
        reply(text(ANSWER)),
    ]


class Pty:
    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        import fcntl
        import struct
        import termios

        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        self.proc = subprocess.Popen(
            args, env=env, cwd=cwd, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
            start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )  # fmt: skip
        os.close(slave)
        self.shown = b""

    def wait_for(self, needle: str, after: int = 0, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            where = self.shown.find(needle.encode(), after)
            if where >= 0:
                return where
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.shown += os.read(self.master, 65536)
                except OSError:
                    break
        raise SystemExit(f"{needle!r} never showed:\n{self.shown.decode(errors='replace')}")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())


def screen_svg(shown: bytes, title: str) -> str:
    """The terminal's last screen after `shown`, as SVG."""
    import pyte
    from rich.console import Console
    from rich.style import Style
    from rich.text import Text

    screen = pyte.Screen(COLUMNS, LINES)
    stream = pyte.ByteStream(screen)
    stream.feed(shown)

    def colour(name: str) -> str | None:
        if name == "default":
            return None
        if len(name) == 6 and all(c in "0123456789abcdefABCDEF" for c in name):
            return f"#{name}"
        name = name.replace("brown", "yellow")
        return name.replace("bright", "bright_") if name.startswith("bright") else name

    used = max((y for y in range(LINES) if screen.display[y].strip()), default=0) + 1
    out = Text()
    for y in range(used):
        row = screen.buffer[y]
        for x in range(COLUMNS):
            char = row[x]
            fg, bg = colour(char.fg), colour(char.bg)
            if char.reverse:
                fg, bg = bg or "black", fg or "white"
            style = Style(color=fg, bgcolor=bg, bold=char.bold, italic=char.italics,
                          underline=char.underscore)  # fmt: skip
            out.append(char.data or " ", style)
        if y < used - 1:
            out.append("\n")
    import io

    console = Console(
        record=True, width=COLUMNS, file=io.StringIO(), force_terminal=True,
        color_system="truecolor",
    )  # fmt: skip
    console.print(out, end="")
    return console.export_svg(title=title)


def main() -> int:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "terminal.svg"
    with tempfile.TemporaryDirectory() as tmp, MessagesAPIServer() as api:
        workspace = Path(tmp) / "calc"
        workspace.mkdir()
        (workspace / "calc.py").write_text(CALC)
        api.enqueue(*replies())
        env = dict(os.environ)
        env.update(
            ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="local", AGENTLS_DATA_DIR=f"{tmp}/data",
            XDG_CONFIG_HOME=f"{tmp}/config", TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1",
            AGENTLS_MODEL="claude-sonnet-5-5", COLUMNS=str(COLUMNS), LINES=str(LINES),
        )  # fmt: skip
        agentls = [sys.executable, "-m", "agentls.cli.main"]
        term = Pty(agentls, env, workspace)
        term.wait_for("›")
        term.type("mean() crashes on an empty list; make it raise a clear error\r")
        asked = term.wait_for("calc.py")
        term.wait_for("[y]", after=asked)
        time.sleep(0.3)
        term.type("y")
        done = term.wait_for("ZeroDivisionError")
        term.wait_for("›", after=done)
        time.sleep(0.5)
        term.wait_for("›", after=done)
        svg = screen_svg(term.shown, "agentls")
        term.type("\x04")
        term.proc.wait(timeout=30)
    target.write_text(svg)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
