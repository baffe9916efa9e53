"""What the terminal is shown: the model's text, a tool's output (a repository's file), a diff to
approve. A control character in them is written as \\xNN, not sent to the terminal: an escape
sequence could write the user's clipboard (OSC 52), retitle the window, clear the screen or move
the cursor up to rewrite a diff the user is about to approve; a bidirectional override reorders
what follows it."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, TextIO, cast

if TYPE_CHECKING:
    from rich.console import Console

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embeddings,
# overrides and isolates.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    text = text.replace("\r\n", "\n")
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if m.group() < "\u0100" else
                       f"\\u{ord(m.group()):04x}", text)  # fmt: skip


class _Visible:
    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        return self.inner.write(visible(text))

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()


def visible_stream(inner: TextIO) -> TextIO:
    """`inner`, with every text written to it made visible()."""
    return cast(TextIO, _Visible(inner))


def raw_stream(stream: TextIO) -> TextIO:
    """The stream under a visible_stream (colours are written there, around text made visible)."""
    return stream.inner if isinstance(stream, _Visible) else stream


def wants_colour(stream: TextIO) -> bool:
    """Rendered, coloured output: a terminal, and NO_COLOR unset (https://no-color.org: set to
    anything non-empty)."""
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def make_console(stream: TextIO) -> Console:
    from rich.console import Console

    return Console(file=stream, force_terminal=True, highlight=False, emoji=False, markup=False)
