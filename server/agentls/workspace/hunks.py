"""A change to one file as hunks, the unit a user reviews: a proposal is offered hunk by hunk (one
TextEdit each), a partial accept takes some of them, review "after" keeps or undoes them.

A hunk is a run of changed lines between two texts, with no context lines: it replaces old lines
[old_start, old_end) by its new lines. Lines keep their line break, so a text's last line without
one is still a line and nothing is lost.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass


def split_lines(text: str) -> list[str]:
    """The lines of text, each with its "\\n" (the last may have none): "".join() gives text back.
    Only "\\n" breaks a line ("\\r\\n" stays whole; a lone "\\r" is not a break, as in LSP's
    ranges of the files agentls writes)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


@dataclass(frozen=True)
class Hunk:
    """Old lines [old_start, old_end) (0-based) become `new_lines`; new_start is where they begin
    in the new text."""

    old_start: int
    old_end: int
    new_start: int
    new_lines: tuple[str, ...]
    old_lines: tuple[str, ...]

    def unified(self) -> str:
        """The hunk in unified-diff form, header included (no context lines)."""
        old_n, new_n = self.old_end - self.old_start, len(self.new_lines)
        header = f"@@ -{_range(self.old_start, old_n)} +{_range(self.new_start, new_n)} @@\n"
        body = [f"-{_line(line)}" for line in self.old_lines]
        body += [f"+{_line(line)}" for line in self.new_lines]
        return header + "".join(body)


def _range(start: int, count: int) -> str:
    # Unified diff's convention: 1-based start; an empty range names the line before it.
    first = start + 1 if count else start
    return str(first) if count == 1 else f"{first},{count}"


def _line(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


# Changed regions longer than this (in lines) are matched with difflib's autojunk (see hunks).
LARGE_MIDDLE = 2000


def hunks(old: str, new: str) -> list[Hunk]:
    """The hunks that turn old into new, in order (none when they are equal)."""
    a, b = split_lines(old), split_lines(new)
    # The lines both texts start and end with are in no hunk: the matcher only sees the middle.
    # It takes time quadratic in a text's repeated lines (blank ones, "}"): past LARGE_MIDDLE
    # lines it lets the most frequent ones (difflib's autojunk) join a match without starting one,
    # still exact hunks (a 40,000-line file with 43 spread changes: 345 s before, 1.4 s).
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    out: list[Hunk] = []
    a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
    large = max(len(a_mid), len(b_mid)) > LARGE_MIDDLE
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=large)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        out.append(Hunk(i1, i2, j1, tuple(b[j1:j2]), tuple(a[i1:i2])))
    return out


def apply(old: str, chosen: Sequence[Hunk]) -> str:
    """old with only the chosen hunks (of hunks(old, ...)) applied; the others keep old's lines."""
    lines = split_lines(old)
    out: list[str] = []
    cursor = 0
    for hunk in sorted(chosen, key=lambda h: h.old_start):
        if hunk.old_start < cursor:
            raise ValueError("overlapping hunks")
        out.extend(lines[cursor : hunk.old_start])
        out.extend(hunk.new_lines)
        cursor = hunk.old_end
    out.extend(lines[cursor:])
    return _join(out)


def _join(lines: list[str]) -> str:
    # A line without its break can end up mid-text when a hunk that followed it is dropped or
    # taken: give it the break its neighbours have, so no two lines run together.
    fixed = [
        line if line.endswith("\n") or i == len(lines) - 1 else line + "\n"
        for i, line in enumerate(lines)
    ]
    return "".join(fixed)


def line_offsets(text: str) -> list[int]:
    """The offset where each line of split_lines(text) starts, plus len(text) at the end."""
    offsets = [0]
    for line in split_lines(text):
        offsets.append(offsets[-1] + len(line))
    return offsets


def unified_diff(a: str, b: str, a_name: str, b_name: str, context: int = 3) -> str:
    """A unified diff of two texts ("" when equal)."""
    lines = difflib.unified_diff(
        [_line(x) for x in split_lines(a)],
        [_line(x) for x in split_lines(b)],
        fromfile=a_name,
        tofile=b_name,
        n=context,
    )
    return "".join(lines)
