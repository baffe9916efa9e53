"""A change merged into what the user typed while it waited (workspace/merge.py)."""

from __future__ import annotations

from agentls.workspace.merge import Overlap, merge, rebase_reason

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
