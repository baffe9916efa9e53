"""bench/merge.py: the keystrokes and the proposal it times are what it says (a rename near the
end of the file, typing near the top), and each keystroke's merge keeps both. No time is
asserted."""

from __future__ import annotations

from agentls.workspace.merge import merge
from bench.merge import KEYSTROKES, texts, whole_file_merge


def source() -> str:
    body = "".join(
        f"def f{i}(x):\n    return f{i - 1}(x) if x else {i}\n\n\n" for i in range(1, 60)
    )
    return "import os\n" * 40 + body


def test_each_keystroke_merges_with_the_rename() -> None:
    base, typing, proposal = texts(source())
    assert len(typing) == KEYSTROKES
    assert "def f54_renamed(x):" in proposal and "return f54_renamed(x)" in proposal
    first = typing[0].split("\n")
    assert [i for i, line in enumerate(first) if line != base.split("\n")[i]] == [41]
    for ours in typing:
        merged = merge(base, ours, proposal).text
        assert merged is not None
        assert "def f54_renamed(x):" in merged and ours.split("\n")[41] in merged
    whole_file_merge(base, typing[-1], proposal)  # the floor runs on the same texts
