"""A change merged into what the user typed while it waited (workspace/merge.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentls.workspace.merge import Overlap, _Matcher, marked, merge, rebase_reason

BASE = "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"


def _with(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1
    return text.replace(old, new)


def test_typing_in_another_region_is_kept_with_the_change() -> None:
    ours = _with(BASE, "return 1", "return 10  # the user's")
    theirs = _with(BASE, "return 3", "return 30")

    merged = merge(BASE, ours, theirs)

    assert merged.clean and not merged.overlaps
    assert merged.text == _with(ours, "return 3", "return 30")


def test_the_same_line_changed_on_both_sides_is_a_conflict_with_no_text() -> None:
    ours = _with(BASE, "return 2", "return 'user'")
    theirs = _with(BASE, "return 2", "return 'agent'")

    merged = merge(BASE, ours, theirs)

    assert merged.text is None and not merged.clean
    assert merged.overlaps == (Overlap(5, 6),)
    assert merged.where() == "line 6"


def test_the_same_change_on_both_sides_is_taken_once() -> None:
    both = _with(BASE, "return 2", "return 22")
    assert merge(BASE, both, _with(both, "return 3", "return 33")).text == _with(
        both, "return 3", "return 33"
    )
    assert merge(BASE, both, both).text == both


def test_adjacent_lines_count_as_overlapping() -> None:
    # As in diff3 and git merge-file: neither side's context survives the other's edit.
    ours = _with(BASE, "def b():", "def b(x):")
    theirs = _with(BASE, "return 2", "return 3")

    assert merge(BASE, ours, theirs).overlaps == (Overlap(4, 6),)


def test_an_unchanged_side_gives_the_other() -> None:
    theirs = _with(BASE, "return 1", "return 0")
    assert merge(BASE, BASE, theirs).text == theirs
    ours = _with(BASE, "return 1", "return -1")
    assert merge(BASE, ours, BASE).text == ours


def test_insertions_and_a_last_line_without_a_break_survive() -> None:
    base = "one\ntwo\nthree\nfour\nfive"
    ours = "zero\none\ntwo\nthree\nfour\nfive"
    theirs = "one\ntwo\nthree\nfour\nfive!"

    assert merge(base, ours, theirs).text == "zero\none\ntwo\nthree\nfour\nfive!"


def test_several_conflicts_are_all_named() -> None:
    ours = _with(_with(BASE, "return 1", "return 'u1'"), "return 3", "return 'u3'")
    theirs = _with(_with(BASE, "return 1", "return 'a1'"), "return 3", "return 'a3'")

    merged = merge(BASE, ours, theirs)

    assert merged.where() == "line 2 and line 10"
    reason = rebase_reason(merged, "app.py")
    assert "line 2 and line 10 of app.py" in reason
    assert "nothing was written over it" in reason


def test_large_texts_merge_too() -> None:
    base = "".join(f"line {i}\n" for i in range(5000))
    ours = base.replace("line 10\n", "line ten\n")
    theirs = base.replace("line 4000\n", "line four thousand\n")

    assert merge(base, ours, theirs).text == ours.replace("line 4000\n", "line four thousand\n")


LINES = st.lists(st.sampled_from(["a\n", "b\n", "\n", "}\n", "c"]), max_size=30)


@given(LINES, LINES)
def test_the_matcher_gives_real_increasing_matches(a: list[str], b: list[str]) -> None:
    blocks = _Matcher(None, a, b).get_matching_blocks()
    assert blocks[-1] == (len(a), len(b), 0)
    ends = (0, 0)
    for i, j, n in blocks[:-1]:
        assert n > 0 and i >= ends[0] and j >= ends[1]
        assert a[i : i + n] == b[j : j + n]
        ends = (i + n, j + n)


@given(st.lists(st.sampled_from(["x\n", "y\n", "\n", "}\n"]), min_size=8, max_size=40), st.data())
def test_changes_three_lines_apart_always_merge(base_lines: list[str], data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(base_lines) - 5))
    j = data.draw(st.integers(i + 4, len(base_lines) - 1))
    ours, theirs = list(base_lines), list(base_lines)
    ours[i], theirs[j] = "typed\n", "proposed\n"
    both = list(base_lines)
    both[i], both[j] = "typed\n", "proposed\n"

    assert merge("".join(base_lines), "".join(ours), "".join(theirs)).text == "".join(both)


def test_marked_puts_both_sides_of_a_conflict_between_gits_markers() -> None:
    base, ours, theirs = "a\nb\nc\nd\ne\n", "a\nmine\nc\nd\nE\n", "a\ntheirs\nc\nd\ne\n"
    assert marked(base, ours, theirs, "yours", "agentls/x") == (
        "a\n<<<<<<< yours\nmine\n=======\ntheirs\n>>>>>>> agentls/x\nc\nd\nE\n"
    )
    # Without a conflict it is the merge itself.
    assert (
        marked(base, "a\nb\nc\nD\ne\n", theirs, "yours", "x")
        == merge(base, "a\nb\nc\nD\ne\n", theirs).text
        == "a\ntheirs\nc\nD\ne\n"
    )


def test_marked_never_ends_a_line_of_text_with_a_marker() -> None:
    # No last line break on either side: each side's last line still ends before the marker.
    assert marked("x", "y", "z", "yours", "b") == "<<<<<<< yours\ny\n=======\nz\n>>>>>>> b\n"
    # One clean last line without a break keeps having none.
    assert marked("a\nb\nc", "A\nb\nc", "a\nb\nc", "yours", "b") == "A\nb\nc"
    assert marked("a\nb\nc\nd", "A\nb\nc\nd", "a\nb\nc\nD", "yours", "b") == "A\nb\nc\nD"
