"""Three-way merge of a change with what the user typed meanwhile.

A change is made from a text (`base`: what the agent read, or the text a proposal was drawn on);
by the time it is applied the file may hold other text (`ours`: the user's typing, a formatter).
Rather than refuse, the change (`theirs`) is merged into the file as it is now, line by line, with
merge3 (Bazaar/Breezy's three-way merge, on PyPI): regions only one side changed take that side,
regions both changed alike are taken once, and regions both changed differently are conflicts.
A merge with a conflict has no text: nothing is ever written over the user's lines. Changes to
adjacent lines count as overlapping (as in `git merge-file` and diff3), since neither side's
context survives the other's edit.

Lines keep their breaks (as workspace/hunks.split_lines: only "\n" ends a line), so the merged
text joins back exactly.
"""

from __future__ import annotations

import difflib
import functools
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from merge3 import Merge3

from agentls.workspace.hunks import LARGE_MIDDLE


@dataclass(frozen=True)
class Overlap:
    """Lines [start, end) of `ours` (0-based) that the change also changes; an empty range
    (start == end) is a place both sides inserted or deleted at."""

    start: int
    end: int

    def label(self) -> str:
        """Its lines as a person counts them: "line 4", "lines 4-6", "at line 4"."""
        if self.end <= self.start:
            return f"at line {self.start + 1}"
        if self.end - self.start == 1:
            return f"line {self.start + 1}"
        return f"lines {self.start + 1}-{self.end}"


@dataclass(frozen=True)
class Merged:
    """A merge's result: the merged text (None when there are conflicts) and the conflicting
    regions of `ours`."""

    text: str | None
    overlaps: tuple[Overlap, ...] = ()

    @property
    def clean(self) -> bool:
        return self.text is not None

    def where(self) -> str:
        """The conflicting lines, for a message: "lines 4-6 and line 9"."""
        labels = [o.label() for o in self.overlaps]
        if len(labels) <= 1:
            return "".join(labels)
        return ", ".join(labels[:-1]) + " and " + labels[-1]


class _Matcher:
    """merge3's two-way matcher: the lines both texts start and end with are matched at once,
    and difflib's SequenceMatcher (exact unless the middle is large, as workspace/hunks.hunks
    does) only matches the middle between them. Typing at one place leaves a middle of a few
    lines, so a merge at each keystroke costs little."""

    def __init__(self, isjunk: object, a: Sequence[str], b: Sequence[str]) -> None:
        self.a, self.b = a, b
        self.blocks: list[tuple[int, int, int]] | None = None  # known already

    def get_matching_blocks(self) -> list[tuple[int, int, int]]:
        if self.blocks is not None:
            return self.blocks
        a, b = self.a, self.b
        head = _shared(lambda k: a[:k] == b[:k], min(len(a), len(b)))
        limit = min(len(a), len(b)) - head
        tail = _shared(lambda k: a[len(a) - k :] == b[len(b) - k :], limit)
        a_mid, b_mid = a[head : len(a) - tail], b[head : len(b) - tail]
        large = max(len(a_mid), len(b_mid)) > LARGE_MIDDLE
        middle = difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=large)
        blocks = [(0, 0, head)] if head else []
        blocks += [(i + head, j + head, n) for i, j, n in middle.get_matching_blocks() if n]
        if tail:
            blocks.append((len(a) - tail, len(b) - tail, tail))
        blocks.append((len(a), len(b), 0))  # difflib's closing sentinel
        return _joined(blocks)


def _shared(same: Callable[[int], bool], limit: int) -> int:
    """The most lines k <= limit for which same(k) holds (it holds up to some k, not beyond):
    a binary search of list slices compared in C, not a Python loop over the lines."""
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if same(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _split(text: str) -> tuple[str, ...]:
    """split_lines(text): only "\n" breaks a line (io's newline="\n"), split in C."""
    return tuple(io.StringIO(text, newline="\n").readlines())


# A change's two texts are split once, not at every keystroke.
_lines = functools.lru_cache(maxsize=32)(_split)


@functools.lru_cache(maxsize=16)
def _change_blocks(base: str, theirs: str) -> tuple[tuple[int, int, int], ...]:
    """The matching blocks of a change's lines (base -> theirs), kept for the next keystrokes."""
    return tuple(_Matcher(None, _lines(base), _lines(theirs)).get_matching_blocks())


def _joined(blocks: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Adjacent blocks as one (as difflib gives them): the head, the middle's and the tail's."""
    out: list[tuple[int, int, int]] = []
    for i, j, n in blocks:
        if out and n and out[-1][0] + out[-1][2] == i and out[-1][1] + out[-1][2] == j:
            last = out.pop()
            out.append((last[0], last[1], last[2] + n))
        else:
            out.append((i, j, n))
    return out


def _merger(base: str, ours: str, theirs: str) -> Merge3[str]:
    """merge3's merger of the three texts' lines, with the change's matches made once."""
    base_lines, ours_lines, theirs_lines = _lines(base), _split(ours), _lines(theirs)
    # The change's own matches (base -> theirs) are the same at every keystroke: made once.
    known = _change_blocks(base, theirs)

    def matcher(isjunk: object, a: Sequence[str], b: Sequence[str]) -> _Matcher:
        found = _Matcher(isjunk, a, b)
        if a is base_lines and b is theirs_lines:
            found.blocks = list(known)
        return found

    return Merge3(
        base_lines,
        ours_lines,
        theirs_lines,
        sequence_matcher=matcher,  # type: ignore[arg-type]  # a factory, as difflib's class is
    )


def merge(base: str, ours: str, theirs: str) -> Merged:
    """theirs' changes from base merged into ours (see the module's docstring)."""
    if ours == base or ours == theirs:
        return Merged(theirs)
    if theirs == base:
        return Merged(ours)
    merger = _merger(base, ours, theirs)
    base_lines, ours_lines, theirs_lines = merger.base, merger.a, merger.b
    out: list[str] = []
    overlaps: list[Overlap] = []
    for region in merger.reprocess_merge_regions(merger.merge_regions()):
        kind = region[0]
        if kind == "unchanged":
            out.extend(base_lines[region[1] : region[2]])
        elif kind in ("same", "a"):
            out.extend(ours_lines[region[1] : region[2]])
        elif kind == "b":
            out.extend(theirs_lines[region[1] : region[2]])
        else:  # ("conflict", base_start, base_end, ours_start, ours_end, theirs_start, theirs_end)
            start, end = cast("tuple[object, ...]", region)[3:5]
            assert isinstance(start, int) and isinstance(end, int)
            overlaps.append(Overlap(start, end))
    if overlaps:
        return Merged(None, tuple(overlaps))
    return Merged("".join(out))


def marked(base: str, ours: str, theirs: str, ours_name: str, theirs_name: str) -> str:
    """The merge as git leaves a conflicted file: where both sides changed the same lines,
    ours and theirs between the standard markers (<<<<<<< ours_name, =======, >>>>>>>
    theirs_name); elsewhere as merge() merges. What an editor's merge tools recognise. A text
    without a last line break is merged with one, so a marker never ends a line of text."""
    ended = [t if not t or t.endswith("\n") else t + "\n" for t in (base, ours, theirs)]
    lines = list(_merger(*ended).merge_lines(ours_name, theirs_name, reprocess=True))
    if ours and not ours.endswith("\n") and lines and not lines[-1].startswith(">>>>>>> "):
        lines[-1] = lines[-1].removesuffix("\n")
    return "".join(lines)


def rebase_reason(merged: Merged, rel: str, waited: str = "for approval") -> str:
    """Why a change was not merged into the text the file holds now, for the model and the
    user (its wording keeps workspace/changed.py's)."""
    return (
        f"the file changed while the change waited {waited}, on {merged.where()} of {rel}, "
        "which the change also changes; nothing was written over it. Read it again and redo the "
        "change on what it holds now"
    )
