"""What a turn changed, for its finish gate: the comparison of a file's diagnostics before the turn
with those after it, the baselines kept (the first one of each file), and the diagnostics taken
again as the baseline was (an editor's push of the version written, agentls' own checks)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentls.verify.before_after import Before
from agentls.verify.board import DiagnosticsBoard
from agentls.verify.checks import diagnostic
from agentls.verify.turn_edits import Recheck, TurnEdits, introduced
from agentls.verify.workspace import DiskWorkspace
from agentls.workspace.protocol import EditOutcome, FileChange


def problem(
    message: str, severity: int = 1, line: int = 0, source: str = "pyright"
) -> dict[str, Any]:
    d = diagnostic(line, 0, message, source)
    d["severity"] = severity
    return d


def test_an_error_the_file_had_before_is_not_new_wherever_it_moved() -> None:
    before = [problem('"x" is not defined', line=3)]
    after = [problem('"x" is not defined', line=9), problem('"y" is not defined', line=1)]
    assert introduced(before, after, "errors") == [after[1]]


def test_a_second_error_like_one_there_before_is_new() -> None:
    before = [problem('"x" is not defined', line=3)]
    after = [problem('"x" is not defined', line=3), problem('"x" is not defined', line=7)]
    assert introduced(before, after, "errors") == [after[1]]


def test_warnings_count_only_at_the_warnings_level_and_hints_never() -> None:
    after = [problem("unused", severity=2), problem("a hint", severity=4), problem("bad")]
    assert introduced([], after, "errors") == [after[2]]
    assert introduced([], after, "warnings") == [after[0], after[2]]


def test_the_same_message_from_another_checker_is_new() -> None:
    before = [problem("E1", source="ruff")]
    after = [problem("E1", source="pyright")]
    assert introduced(before, after, "errors") == after


def test_a_fixed_error_is_not_reported() -> None:
    assert introduced([problem("gone")], [], "errors") == []


def test_the_first_baseline_of_a_file_is_kept_and_a_new_turn_forgets_them(tmp_path: Path) -> None:
    edits = TurnEdits()
    path = tmp_path / "a.py"
    first = Before(served=[problem("there before")])
    edits.wrote(path, first, None, None)
    edits.wrote(path, Before(served=[problem("made by the first edit")]), None, None)
    assert edits and edits.files[path].before == [problem("there before")]
    edits.start()
    assert not edits and edits.files == {}


def test_a_file_a_change_of_several_deleted_is_not_checked(tmp_path: Path) -> None:
    edits = TurnEdits()
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    edits.wrote(a, Before(), None, None)
    changes = [FileChange(a, "", "x = 1\n", delete=True), FileChange(b, "y = 2\n", None)]
    outcomes = [EditOutcome(applied=True), EditOutcome(applied=True, version=4)]
    edits.wrote_all(changes, [None, Before()], outcomes)
    assert list(edits.files) == [b] and edits.files[b].version == 4


async def test_an_edited_files_push_is_taken_for_the_version_written(tmp_path: Path) -> None:
    board = DiagnosticsBoard()
    path = tmp_path / "a.py"
    uri = path.as_uri()
    await board.push(uri, 1, [problem("old")])
    edits = TurnEdits()
    edits.wrote(path, Before(by_push=True, seq=1, pushed=[problem("old")]), 3, None)
    await board.push(uri, 2, [problem("stale: of version 2")])

    async def read(_: Path) -> str:
        return ""

    recheck = Recheck(read, DiskWorkspace(tmp_path).languages, board, wait_s=30)
    checking = asyncio.ensure_future(recheck.run(edits))
    await asyncio.sleep(0)
    assert not checking.done()  # version 2 does not answer the write of version 3
    await board.push(uri, 3, [problem("old"), problem("new in version 3")])
    [checked] = await checking
    assert checked.edited and checked.after is not None
    assert introduced(checked.before, checked.after, "errors") == [problem("new in version 3")]


async def test_own_checks_read_the_text_now(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("def f(:\n")
    ws = DiskWorkspace(tmp_path)
    edits = ws.turn_edits(None)
    edits.wrote(path, Before(own=[]), None, None)
    [checked] = await ws.recheck(None)
    assert checked.after is not None
    assert [d["message"] for d in introduced(checked.before, checked.after, "errors")] == [
        "SyntaxError: invalid syntax"
    ]
    path.write_text("def f():\n    pass\n")
    [checked] = await ws.recheck(None)
    assert checked.after == []
