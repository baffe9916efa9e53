"""merge: what a waiting proposal costs at each keystroke of the user (lsp/rebase.py merges it
anew into the document at every didChange; workspace/merge.py).

On more-itertools' more.py (about 5,300 lines; the pinned sdist bench/language.py downloads once
into bench/results/cache/), the proposal renames a function near the end of the file (three
hunks) and the user types one character at a time into a line near the top: each keystroke is
one merge of (the text the proposal was made from, the text after that keystroke, the proposal).
Figures: the median time of one merge, and the same merge with merge3's own matcher (difflib over
the whole file, exact below 2,000 lines and with autojunk above, as workspace/hunks.py does),
which merge.py's matcher replaces by matching the lines all texts share at both ends first.
"""

from __future__ import annotations

import difflib
import statistics
import time
from collections.abc import Sequence

from merge3 import Merge3

from agentls.workspace.hunks import LARGE_MIDDLE, split_lines
from agentls.workspace.merge import merge
from bench.common import BenchResult, Figure, runs, temp_dir
from bench.language import VERSION, sdist, unpack

FILE = "more_itertools/more.py"
KEYSTROKES = 20


def texts(source: str) -> tuple[str, list[str], str]:
    """The base, the user's text after each keystroke, and the proposal."""
    lines = source.split("\n")
    target = next(i for i in range(len(lines) * 9 // 10, len(lines)) if lines[i].startswith("def "))
    name = lines[target][4:].split("(")[0]
    proposal = source.replace(f"def {name}(", f"def {name}_renamed(").replace(
        f"{name}(", f"{name}_renamed("
    )
    typed_at = next(i for i in range(40, len(lines)) if lines[i].startswith("    "))
    typing = []
    for k in range(1, KEYSTROKES + 1):
        edited = list(lines)
        edited[typed_at] = lines[typed_at] + "  # note"[:k] + "x" * max(0, k - 8)
        typing.append("\n".join(edited))
    return source, typing, proposal


def whole_file_merge(base: str, ours: str, theirs: str) -> None:
    """merge3 with its default matcher over the whole texts (what merge.py did first)."""
    b, a, t = split_lines(base), split_lines(ours), split_lines(theirs)
    large = max(len(b), len(a), len(t)) > LARGE_MIDDLE

    def matcher(isjunk: object, x: Sequence[str], y: Sequence[str]) -> difflib.SequenceMatcher[str]:
        return difflib.SequenceMatcher(None, x, y, autojunk=large)

    list(Merge3(b, a, t, sequence_matcher=matcher).merge_regions())  # type: ignore[arg-type]


def timed(fn: object, base: str, typing: list[str], proposal: str) -> list[float]:
    samples = []
    for ours in typing:
        start = time.perf_counter()
        fn(base, ours, proposal)  # type: ignore[operator]
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def run(result: BenchResult) -> None:
    with temp_dir("merge") as tmp:
        source = (unpack(sdist(), tmp) / FILE).read_text()
    base, typing, proposal = texts(source)
    assert all(merge(base, ours, proposal).clean for ours in typing)
    ours_ms, whole_ms = [], []
    for _ in range(runs()):
        ours_ms += timed(merge, base, typing, proposal)
        whole_ms += timed(whole_file_merge, base, typing, proposal)
    lines = base.count("\n")
    hunks = sum(
        1
        for tag in difflib.SequenceMatcher(
            None, base.split("\n"), proposal.split("\n"), autojunk=False
        ).get_opcodes()
        if tag[0] != "equal"
    )
    mine, floor = statistics.median(ours_ms), statistics.median(whole_ms)
    result.add(
        Figure(
            f"merge: one keystroke under a waiting proposal (more.py, {lines} lines, "
            f"{hunks} hunks; median)",
            round(mine, 2),
            "ms",
            round(floor, 2),
            round(mine / floor, 3),
            "under 16 ms (a frame)",
            mine < 16,
            note="floor: merge3 with difflib over the whole file",
        )
    )
    result.details = {
        "file": f"more-itertools {VERSION} {FILE}",
        "lines": lines,
        "proposal_hunks": hunks,
        "keystrokes": len(typing) * runs(),
        "merge_ms": sorted(ours_ms),
        "whole_file_ms": sorted(whole_ms),
        "max_ms": round(max(ours_ms), 2),
    }
