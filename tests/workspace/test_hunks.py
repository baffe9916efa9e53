"""workspace/hunks.py: the hunks between two texts, and applying any subset of them."""

from __future__ import annotations

import itertools
import random

import pytest

from agentls.workspace.hunks import apply, hunks, split_lines


def texts(seed: int) -> tuple[str, str]:
    """Two random texts of few distinct lines (so lines repeat, as blank ones do in code)."""
    rng = random.Random(seed)
    pool = ["a\n", "b\n", "\n", "c\n", "}\n", "x"]
    old = [rng.choice(pool[:-1]) for _ in range(rng.randint(0, 30))]
    new = list(old)
    for _ in range(rng.randint(1, 6)):
        at = rng.randint(0, len(new))
        roll = rng.random()
        if roll < 0.4 and at < len(new):
            del new[at]
        elif roll < 0.7 and at < len(new):
            new[at] = rng.choice(pool[:-1])
        else:
            new.insert(at, rng.choice(pool[:-1]))
    if rng.random() < 0.3:
        new.append("tail without a break")
    return "".join(old), "".join(new)


@pytest.mark.parametrize("seed", range(200))
def test_the_hunks_turn_old_into_new_and_each_covers_only_changed_lines(seed: int) -> None:
    old, new = texts(seed)
    found = hunks(old, new)
    assert apply(old, found) == new
    a, b = split_lines(old), split_lines(new)
    for hunk in found:
        assert tuple(a[hunk.old_start : hunk.old_end]) == hunk.old_lines
        assert tuple(b[hunk.new_start : hunk.new_start + len(hunk.new_lines)]) == hunk.new_lines
        assert hunk.old_lines != hunk.new_lines
    # Hunks are in order and apart: any subset applies.
    for first, second in itertools.pairwise(found):
        assert first.old_end <= second.old_start
    for chosen in (found[:1], found[1:], found[::2]):
        apply(old, chosen)


def test_equal_texts_have_no_hunk_and_a_change_at_either_end_is_one() -> None:
    body = "".join(f"line {i}\n" if i % 3 else "\n" for i in range(3000))
    assert hunks(body, body) == []
    [first] = hunks(body, "new\n" + body)
    assert (first.old_start, first.old_end, first.new_lines) == (0, 0, ("new\n",))
    [last] = hunks(body, body + "end")
    assert (last.old_start, last.old_end, last.new_lines) == (3000, 3000, ("end",))
    middle = body.replace("line 1501\n", "changed\n")
    [one] = hunks(body, middle)
    assert one.old_lines == ("line 1501\n",) and one.new_lines == ("changed\n",)


def test_a_long_changed_region_still_gets_one_hunk_per_change() -> None:
    # Over LARGE_MIDDLE lines between the first and last change: the frequent lines (blank ones,
    # "}") may join a match but not start one; the hunks are still exactly the changes.
    lines = [f"def f{i}():\n" if i % 3 == 0 else "\n" if i % 3 == 1 else "}\n" for i in range(9000)]
    changed = list(lines)
    spots = range(0, 9000, 600)
    for spot in spots:
        changed[spot] = f"def g{spot}():\n"
    old, new = "".join(lines), "".join(changed)
    found = hunks(old, new)
    assert apply(old, found) == new
    assert [(h.old_start, h.old_end) for h in found] == [(s, s + 1) for s in spots]
