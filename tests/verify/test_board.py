"""The board of pushed diagnostics: the push that answers an edit, settled; file types heard."""

from __future__ import annotations

import asyncio

from agentls.verify.board import DiagnosticsBoard, file_type_keys

URI = "file:///w/a.py"
ERROR = {"message": "boom", "severity": 1}


def test_file_types_are_known_by_language_and_extension() -> None:
    assert file_type_keys("file:///w/A.PY", "python") == {"ext:.py", "lang:python"}
    assert file_type_keys("file:///w/Makefile", None) == {"ext:Makefile"}


async def test_a_push_makes_its_file_type_heard() -> None:
    board = DiagnosticsBoard()
    assert not board.heard_from(URI, "python")
    await board.push("file:///w/b.py", 1, [])
    assert board.heard_from(URI, None) and board.heard_from(URI, "python")
    assert not board.heard_from("file:///w/notes.md", "markdown")


async def test_the_answer_is_the_last_of_pushes_close_together() -> None:
    board = DiagnosticsBoard()

    async def editor() -> None:
        await board.push(URI, 2, [])
        await asyncio.sleep(0.01)
        await board.push(URI, 2, [ERROR])

    task = asyncio.ensure_future(editor())
    answer = await board.wait_settled(URI, 0, 2, 5.0)
    await task
    assert answer is not None and answer.diagnostics == [ERROR]


async def test_a_stale_version_is_not_the_answer() -> None:
    board = DiagnosticsBoard()
    await board.push(URI, 1, [])
    assert await board.wait_settled(URI, 0, 2, 0.05) is None
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, lambda: asyncio.ensure_future(board.push(URI, 2, [ERROR])))
    answer = await board.wait_settled(URI, 0, 2, 5.0)
    assert answer is not None and answer.version == 2


async def test_without_versions_any_push_after_the_edit_answers() -> None:
    board = DiagnosticsBoard()
    await board.push(URI, None, [])
    seq = board.current(URI).seq  # type: ignore[union-attr]
    assert await board.wait_settled(URI, seq, None, 0.05) is None
    await board.push(URI, None, [ERROR])
    answer = await board.wait_settled(URI, seq, None, 5.0)
    assert answer is not None and answer.diagnostics == [ERROR]
