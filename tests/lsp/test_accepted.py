"""agent/approve's `edit` turned into accepted texts (lsp/accepted.py), and a proposal's hunks as
TextEdits (lsp/textedit.py hunk_edits): the conversion both ways, in the client's encoding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.uris import from_fs_path

from agentls.lsp.accepted import EditRefused, Proposal, ProposedFile, accepted_texts
from agentls.lsp.textedit import apply_text_edits, hunk_edits
from agentls.lsp.transport import converter
from agentls.workspace.hunks import hunks

STRUCTURE = converter().structure
UNSTRUCTURE = converter().unstructure


def proposal(old: str | None, new: str, version: int | None = None) -> tuple[Proposal, str]:
    path = Path("/ws/a.py")
    uri = str(from_fs_path(str(path)))
    return Proposal("s", [ProposedFile(path, uri, old, new, version)]), uri


def doc_edit(uri: str, edits: list[Any], version: int | None = None) -> dict[str, Any]:
    return {"documentChanges": [{"textDocument": {"uri": uri, "version": version}, "edits": edits}]}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\nd\n"),
        ("a\nb", "a\nb\nc"),  # no final line break
        ("x\n", ""),
        ("😀 one\ntwo\n😀 three\n", "😀 one\n2\n😀 three!\n"),  # astral: two UTF-16 units
        ("keep\n", "new first\nkeep\n"),  # a pure insertion
    ],
)
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_hunk_edits_are_whole_lines_and_applying_each_subset_is_hunks_apply(
    old: str, new: str, encoding: str
) -> None:
    edits = hunk_edits(old, new, encoding)
    assert len(edits) == len(hunks(old, new))
    assert apply_text_edits(old, edits, encoding) == new
    for edit in edits:
        assert edit.range.start.character == 0
    prop, uri = proposal(old, new)
    for i in range(len(edits)):
        subset = [UNSTRUCTURE(edits[i])]
        texts = accepted_texts(prop, doc_edit(uri, subset), STRUCTURE, encoding)
        expected = apply_text_edits(old, [edits[i]], encoding)
        assert texts == ({prop.files[0].path: expected} if expected != old else {})


def test_plain_changes_are_taken_and_an_unchanged_result_is_left_out() -> None:
    prop, uri = proposal("a\nb\n", "a\nc\n")
    edit = {
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
        "newText": "mine\n",
    }
    assert accepted_texts(prop, {"changes": {uri: [edit]}}, STRUCTURE, "utf-16") == {
        prop.files[0].path: "a\nmine\n"
    }
    assert accepted_texts(prop, {"changes": {uri: []}}, STRUCTURE, "utf-16") == {}


def test_a_new_file_created_without_text_is_empty() -> None:
    prop, uri = proposal(None, "x\n")
    created = accepted_texts(
        prop, {"documentChanges": [{"kind": "create", "uri": uri}]}, STRUCTURE, "utf-16"
    )
    assert created == {prop.files[0].path: ""}
    assert accepted_texts(prop, {"documentChanges": []}, STRUCTURE, "utf-16") == {}


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        ("twice", "edited twice"),
        ("backwards", "ends before it starts"),
        ("snippet", "no snippets"),
        ("rename", "cannot rename"),
    ],
)
def test_refused_edits_say_why(edit: str, reason: str) -> None:
    prop, uri = proposal("a\nb\n", "a\nc\n", version=3)
    line = {
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
        "newText": "c\n",
    }
    raw: dict[str, Any] = {
        "twice": {
            "documentChanges": [
                {"textDocument": {"uri": uri, "version": 3}, "edits": [line]},
                {"textDocument": {"uri": uri, "version": 3}, "edits": []},
            ]
        },
        "backwards": doc_edit(
            uri,
            [{**line, "range": {"start": line["range"]["end"], "end": line["range"]["start"]}}],
            3,
        ),
        "snippet": doc_edit(uri, [{"range": line["range"], "snippet": {"value": "$0"}}], 3),
        "rename": {"documentChanges": [{"kind": "rename", "oldUri": uri, "newUri": uri + "x"}]},
    }[edit]
    with pytest.raises(EditRefused, match=reason):
        accepted_texts(prop, raw, STRUCTURE, "utf-16")
