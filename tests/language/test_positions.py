"""Finding the symbol the model names, and applying a language server's edits (plain text)."""

from __future__ import annotations

import pytest

from agentls.language.edits import UnsupportedEdit, apply_text_edits, edits_by_file
from agentls.language.positions import SymbolNotFound, find_symbol, index_of_column, utf16_column

TEXT = "import os\n\ndef load(path):\n    return path\n\n\nx = load('a')\ny = load('b')\n"


def test_the_nearest_whole_word_occurrence_to_the_line_is_picked() -> None:
    at = find_symbol(TEXT, "load", 8, "m.py")
    assert (at.line, at.character) == (7, 4)
    assert "m.py:8:5" in at.note and "on that line" in at.note
    near = find_symbol(TEXT, "load", 6, "m.py")
    assert near.line == 6 and "nearest to line 6" in near.note


def test_without_a_line_the_declaration_wins_and_dotted_names_use_their_last_part() -> None:
    at = find_symbol(TEXT, "load", None, "m.py")
    assert (at.line, at.character) == (2, 4) and "declaration" in at.note
    assert find_symbol(TEXT, "os.path", None, "m.py").line == 2  # `path`, its first use


def test_a_name_that_is_not_there_as_a_whole_word_is_a_clear_error() -> None:
    with pytest.raises(SymbolNotFound, match="`loa` does not occur in m.py"):
        find_symbol(TEXT, "loa", None, "m.py")
    with pytest.raises(SymbolNotFound, match="LOAD.*another case|another case"):
        find_symbol(TEXT, "LOAD", None, "m.py")


def test_columns_count_utf16_code_units() -> None:
    line = "s = '😀'; name = 1"
    index = line.index("name")
    assert utf16_column(line, index) == index + 1  # the emoji is two UTF-16 units
    assert index_of_column(line, index + 1) == index
    at = find_symbol(line + "\n", "name", 1, "u.py")
    assert at.character == index + 1


def test_text_edits_apply_against_the_original_text() -> None:
    text = "a = greet\nb = greet(greet)\n"
    edits = [
        {
            "range": {"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 15}},
            "newText": "hi",
        },
        {
            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}},
            "newText": "hi",
        },
        {
            "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 9}},
            "newText": "hi",
        },
    ]
    assert apply_text_edits(text, edits) == "a = hi\nb = hi(hi)\n"
    overlapping = edits + [
        {
            "range": {"start": {"line": 0, "character": 5}, "end": {"line": 0, "character": 6}},
            "newText": "",
        }
    ]
    with pytest.raises(UnsupportedEdit, match="overlap"):
        apply_text_edits(text, overlapping)


def test_workspace_edits_by_file_and_file_operations_refused() -> None:
    edit = {"changes": {"file:///w/a.py": [{"range": {}, "newText": "x"}]}}
    assert [str(p) for p in edits_by_file(edit)] == ["/w/a.py"]
    document = {
        "documentChanges": [
            {"textDocument": {"uri": "file:///w/b%20c.py", "version": 1}, "edits": []}
        ]
    }
    assert [str(p) for p in edits_by_file(document)] == ["/w/b c.py"]
    with pytest.raises(UnsupportedEdit, match="rename a file"):
        edits_by_file(
            {
                "documentChanges": [
                    {"kind": "rename", "oldUri": "file:///w/a.py", "newUri": "file:///w/b.py"}
                ]
            }
        )
    with pytest.raises(UnsupportedEdit, match="not a file"):
        edits_by_file({"changes": {"untitled:1": []}})
