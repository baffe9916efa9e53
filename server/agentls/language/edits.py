"""A language server's WorkspaceEdit (plain JSON) as the new text of each file it changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.language.positions import line_starts, offset_at, uri_to_path


class UnsupportedEdit(ValueError):
    """An edit this side does not apply (creating, renaming or deleting files, a non-file URI)."""


def edits_by_file(
    edit: Any,
    what: str = "the rename",
    advice: str = "rename the file yourself, or choose another name",
) -> dict[Path, list[dict[str, Any]]]:
    """The text edits of a WorkspaceEdit, by file, from `documentChanges` (TextDocumentEdits)
    or `changes`. Raises UnsupportedEdit for file operations (saying that `what` would do one,
    and `advice`) or anything malformed."""
    if not isinstance(edit, dict):
        raise UnsupportedEdit("the language server's answer is not a WorkspaceEdit")
    out: dict[Path, list[dict[str, Any]]] = {}

    def add(uri: Any, edits: Any) -> None:
        path = uri_to_path(uri) if isinstance(uri, str) else None
        if path is None:
            raise UnsupportedEdit(f"the edit names {uri!r}, which is not a file")
        if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
            raise UnsupportedEdit("the edit's text edits are malformed")
        out.setdefault(path, []).extend(edits)

    document_changes = edit.get("documentChanges")
    if document_changes is not None:
        if not isinstance(document_changes, list):
            raise UnsupportedEdit("documentChanges is not a list")
        for change in document_changes:
            if not isinstance(change, dict):
                raise UnsupportedEdit("documentChanges holds something that is not an object")
            if "kind" in change:
                raise UnsupportedEdit(
                    f"{what} would also {change['kind']} a file "
                    f"({change.get('uri') or change.get('oldUri')}), which this tool does not do: "
                    f"{advice}"
                )
            document = change.get("textDocument")
            add(document.get("uri") if isinstance(document, dict) else None, change.get("edits"))
    else:
        changes = edit.get("changes") or {}
        if not isinstance(changes, dict):
            raise UnsupportedEdit("changes is not an object")
        for uri, edits in changes.items():
            add(uri, edits)
    return out


def apply_text_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """`text` with LSP TextEdits applied (all ranges refer to the original text, as LSP says).
    Raises UnsupportedEdit for a malformed or overlapping edit."""
    starts = line_starts(text)
    spans: list[tuple[int, int, str]] = []
    for edit in edits:
        try:
            rng = edit["range"]
            start = offset_at(text, starts, rng["start"]["line"], rng["start"]["character"])
            end = offset_at(text, starts, rng["end"]["line"], rng["end"]["character"])
            new = edit["newText"]
        except (KeyError, TypeError) as exc:
            raise UnsupportedEdit(f"a text edit is malformed ({exc})") from None
        if not isinstance(new, str) or end < start:
            raise UnsupportedEdit("a text edit is malformed")
        spans.append((start, end, new))
    # Stable: edits inserted at one place keep their order.
    spans.sort(key=lambda span: (span[0], span[1]))
    pieces: list[str] = []
    at = 0
    for start, end, new in spans:
        if start < at:
            raise UnsupportedEdit("the language server's text edits overlap")
        pieces.append(text[at:start])
        pieces.append(new)
        at = end
    pieces.append(text[at:])
    return "".join(pieces)
