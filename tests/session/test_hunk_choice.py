"""A proposal as hunks to choose from (the CLI's pick hunks, ACP's request per hunk) and what the
choice accepts: the texts Agent.approve takes, and which hunks accepted texts kept."""

from __future__ import annotations

from pathlib import Path

from agentls.session.hunk_choice import accepted_texts, kept_label, kept_of, proposal_hunks
from agentls.tools.base import PermissionQuery
from agentls.workspace.protocol import FileChange

OLD = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
NEW = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"


def edit(path: Path, old: str | None, new: str) -> PermissionQuery:
    return PermissionQuery(
        tool="edit",
        subject="m.py",
        title="Edit m.py",
        input={},
        path=path,
        old_text=old,
        new_text=new,
    )


def test_each_hunk_is_named_by_its_lines_and_kept_alone(tmp_path: Path) -> None:
    query = edit(tmp_path / "m.py", OLD, NEW)
    assert [h.where for h in proposal_hunks(query)] == ["line 1", "line 5"]
    assert accepted_texts(query, [1]) == {tmp_path / "m.py": "a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n"}
    assert accepted_texts(query, [0]) == {tmp_path / "m.py": "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"}


def test_every_hunk_kept_is_the_proposal_and_none_a_rejection(tmp_path: Path) -> None:
    query = edit(tmp_path / "m.py", OLD, NEW)
    assert accepted_texts(query, [0, 1]) is None
    assert accepted_texts(query, []) == {}


def test_a_new_file_is_one_hunk_all_or_nothing(tmp_path: Path) -> None:
    query = edit(tmp_path / "n.py", None, "x = 1\ny = 2\n")
    assert [h.where for h in proposal_hunks(query)] == ["new file"]
    assert accepted_texts(query, [0]) is None


def test_a_change_to_several_files_leaves_out_a_file_none_of_whose_hunks_is_kept(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    query = PermissionQuery(
        tool="rename",
        subject="x",
        title="Rename x",
        input={},
        changes=[
            FileChange(a, old_text="x = 1\n", new_text="y = 1\n"),
            FileChange(b, old_text="f(x)\n", new_text="f(y)\n"),
        ],
    )
    assert len(proposal_hunks(query)) == 2
    assert accepted_texts(query, [1]) == {b: "f(y)\n"}


def test_which_hunks_accepted_texts_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    query = edit(path, OLD, NEW)
    assert kept_of(query, {path: "a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n"}) == [False, True]
    # The user's own version of a hunk is not that hunk kept.
    assert kept_of(query, {path: "a = 11\nb = 2\nc = 3\nd = 4\ne = 50\n"}) == [False, True]
    assert kept_of(query, {}) == [False, False]
    assert kept_label([False, True]) == "1 of 2 hunks kept"
