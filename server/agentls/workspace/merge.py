"""Three-way merge of a change with what the user typed meanwhile.

A change is made from a text (`base`: what the agent read, or the text a proposal was drawn on);
by the time it is applied the file may hold other text (`ours`: the user's typing, a formatter).
Rather than refuse, the change (`theirs`) is merged into the file as it is now, line by line, with
merge3 (Bazaar/Breezy's three-way merge, on PyPI): regions only one side changed take that side,
regions both changed alike are taken once, and regions both changed differently are conflicts.
A merge with a conflict has no text: nothing is ever written over the user's lines. Changes to
adjacent lines count as overlapping (as in `git merge-file` and diff3), since neither side's
context survives the other's edit.

Lines keep their breaks (workspace/hunks.split_lines), so the merged text joins back exactly.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from merge3 import Merge3

from agentls.workspace.hunks import LARGE_MIDDLE, split_lines


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


def _matcher(large: bool) -> Callable[..., difflib.SequenceMatcher[str]]:
    # Exact matching (no autojunk) unless the texts are large, as workspace/hunks.hunks does.
    def make(isjunk: object, a: Sequence[str], b: Sequence[str]) -> difflib.SequenceMatcher[str]:
        return difflib.SequenceMatcher(None, a, b, autojunk=large)

    return make


def merge(base: str, ours: str, theirs: str) -> Merged:
    """theirs' changes from base merged into ours (see the module's docstring)."""
    if ours == base or ours == theirs:
        return Merged(theirs)
    if theirs == base:
        return Merged(ours)
    base_lines, ours_lines, theirs_lines = split_lines(base), split_lines(ours), split_lines(theirs)
    large = max(len(base_lines), len(ours_lines), len(theirs_lines)) > LARGE_MIDDLE
    merger = Merge3(
        base_lines,
        ours_lines,
        theirs_lines,
        sequence_matcher=_matcher(large),  # type: ignore[arg-type]
    )
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


def rebase_reason(merged: Merged, rel: str, waited: str = "for approval") -> str:
    """Why a change was not merged into the text the file holds now, for the model and the
    user (its wording keeps workspace/changed.py's)."""
    return (
        f"the file changed while the change waited {waited}, on {merged.where()} of {rel}, "
        "which the change also changes; nothing was written over it. Read it again and redo the "
        "change on what it holds now"
    )
