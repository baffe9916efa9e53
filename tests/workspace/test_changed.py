"""A change never lands on a file that changed while it waited (for approval, in the editor)."""

from __future__ import annotations

from agentls.workspace.changed import changed_while_waiting


def test_unchanged_files_take_the_change() -> None:
    assert changed_while_waiting("a\n", "a\n") is None
    assert changed_while_waiting(None, None) is None  # a new file, still not there


def test_each_kind_of_change_is_named() -> None:
    assert changed_while_waiting("a\n", "b\n") == (
        "the file changed while the change waited for approval; read it again and redo the change"
    )
    assert "the file was created while" in (changed_while_waiting(None, "x") or "")
    assert "the file was deleted while" in (changed_while_waiting("x", None) or "")


def test_what_the_change_waited_for() -> None:
    reason = changed_while_waiting("a", "b", "(for approval or in the editor)")
    assert reason is not None and "waited (for approval or in the editor);" in reason
