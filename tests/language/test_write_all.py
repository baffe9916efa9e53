"""DiskWorkspace.write_all: one change over several files, all or none."""

from __future__ import annotations

from pathlib import Path

from agentls.verify.workspace import DiskWorkspace
from agentls.workspace.protocol import FileChange


async def test_all_files_are_written_when_each_is_still_what_the_change_was_made_from(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a.py", tmp_path / "sub" / "b.py"
    a.write_text("x = 1\n")
    ws = DiskWorkspace(tmp_path)
    outcomes = await ws.write_all(
        [FileChange(a, "x = 2\n", "x = 1\n"), FileChange(b, "y = 2\n", None)]
    )
    assert [o.applied for o in outcomes] == [True, True]
    assert a.read_text() == "x = 2\n" and b.read_text() == "y = 2\n"


async def test_nothing_is_written_when_one_file_changed_meanwhile(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 1 # changed by the user\n")
    ws = DiskWorkspace(tmp_path)
    outcomes = await ws.write_all(
        [FileChange(a, "x = 2\n", "x = 1\n"), FileChange(b, "y = 2\n", "y = 1\n")]
    )
    assert [o.applied for o in outcomes] == [False, False]
    assert outcomes[1].reason and "changed" in outcomes[1].reason
    assert outcomes[0].reason and "none was written" in outcomes[0].reason
    assert a.read_text() == "x = 1\n" and b.read_text() == "y = 1 # changed by the user\n"


async def test_a_failed_write_puts_back_the_files_written_before_it(tmp_path: Path) -> None:
    a = tmp_path / "a.py"
    a.write_text("x = 1\n")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, so nothing can be created under it\n")
    ws = DiskWorkspace(tmp_path)
    outcomes = await ws.write_all(
        [FileChange(a, "x = 2\n", "x = 1\n"), FileChange(blocked / "new.py", "z\n", None)]
    )
    assert [o.applied for o in outcomes] == [False, False]
    assert outcomes[1].reason and "could not write" in outcomes[1].reason
    assert a.read_text() == "x = 1\n"


async def test_a_delete_is_part_of_the_change_and_put_back_when_a_later_write_fails(
    tmp_path: Path,
) -> None:
    made, kept = tmp_path / "made.py", tmp_path / "kept.py"
    made.write_text("made = 1\n")
    kept.write_text("k = 2\n")
    ws = DiskWorkspace(tmp_path)
    # A delete checks what the file must still be, as a write does.
    stale = await ws.write_all([FileChange(made, "", "made = 0\n", delete=True)])
    assert not stale[0].applied and made.exists()
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, so nothing can be created under it\n")
    failed = await ws.write_all(
        [
            FileChange(made, "", "made = 1\n", delete=True),
            FileChange(blocked / "new.py", "z\n", None),
        ]
    )
    assert [o.applied for o in failed] == [False, False]
    assert made.read_text() == "made = 1\n"  # deleted, then put back
    done = await ws.write_all(
        [FileChange(made, "", "made = 1\n", delete=True), FileChange(kept, "k = 1\n", "k = 2\n")]
    )
    assert [o.applied for o in done] == [True, True]
    assert not made.exists() and kept.read_text() == "k = 1\n"
