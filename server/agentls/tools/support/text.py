"""Text helpers of the tools: lines (split on "\\n" only), CRLF, counts and sizes for people,
numbered lines, and unified diffs."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

# Diffs of texts bigger than this (after trimming the common head and tail) are summarised.
_DIFF_MAX_LINES = 5000


def split_lines(text: str) -> list[str]:
    """Lines split on "\\n" only (never on \\f, \\u2028, ...), line ends kept."""
    if not text:
        return []
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def display_lines(text: str) -> list[str]:
    """Lines without their terminators (\\n or \\r\\n), as a person reads them."""
    return [line.rstrip("\n").removesuffix("\r") for line in split_lines(text)]


def uses_crlf(text: str) -> bool:
    """Whether the text's line breaks are (mostly) CRLF."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf * 2 >= text.count("\n")


def to_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{n} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"  # pragma: no cover


def number_lines(lines: Sequence[str], first: int) -> str:
    """`cat -n` style: right-aligned line number, a tab, the line."""
    width = max(6, len(str(first + len(lines) - 1)))
    return "\n".join(f"{first + i:>{width}}\t{line}" for i, line in enumerate(lines))


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def unified_diff(old: str | None, new: str, rel: str) -> str:
    """A unified diff with a/ b/ headers. Only the region between the common head and tail is
    compared, so edits of large files stay cheap; a huge changed region is summarised."""
    name = rel.lstrip("/")
    a = split_lines(old or "")
    b = split_lines(new)
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    if head == len(a) == len(b):
        return ""
    start = max(0, head - 3)
    a_mid = a[start : len(a) - max(0, tail - 3)]
    b_mid = b[start : len(b) - max(0, tail - 3)]
    header = f"--- a/{name}\n+++ b/{name}\n"
    if len(a_mid) > _DIFF_MAX_LINES or len(b_mid) > _DIFF_MAX_LINES:
        return header + (
            f"@@ -{start + 1},{len(a_mid)} +{start + 1},{len(b_mid)} @@\n"
            f"(diff of {len(a_mid)} -> {len(b_mid)} changed lines omitted: too large to show)\n"
        )
    out: list[str] = []
    for line in difflib.unified_diff(a_mid, b_mid, n=3, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        match = _HUNK.match(line)
        if match:
            old_start = int(match.group(1)) + start
            new_start = int(match.group(3)) + start
            line = f"@@ -{old_start}{match.group(2) or ''} +{new_start}{match.group(4) or ''} @@"
            out.append(line + "\n")
            continue
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return header + "".join(out)
