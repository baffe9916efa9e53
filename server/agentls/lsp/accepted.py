"""What the user accepted instead of a proposal: agent/approve's `edit` (a WorkspaceEdit) turned
into each file's accepted text, checked against the proposal it answers.

A proposal is offered as a WorkspaceEdit with one TextEdit per hunk (LspWorkspace.build_edit
with per_hunk). The user sends back a subset of those TextEdits, or their own edits, on the same
documents: TextDocumentEdits (at the proposal's version when it had one) or `changes` entries,
applied to the text the proposal was made from; CreateFile only for a proposed new file. Anything
else is refused with the reason, and the question stays open.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from agentls.lsp.textedit import apply_text_edits, offset_at


@dataclass(frozen=True)
class ProposedFile:
    """One file of a proposal: its text before (None: a new file) and the proposed text, and the
    version of its open document when the proposal was made (None: not open)."""

    path: Path
    uri: str
    old_text: str | None
    new_text: str
    version: int | None = None


@dataclass
class Proposal:
    """An open question of a session, and the change it proposes (no files: not a change).
    `files` are as the editor is shown them: rebased over the user's typing (lsp/rebase.py)
    once they changed a file; `asked` the files as first proposed, and `conflicts` the lines of
    each file the user changed that the proposal changes too (then it cannot be accepted)."""

    session_id: str
    files: list[ProposedFile] = field(default_factory=list)
    asked: list[ProposedFile] = field(default_factory=list)
    conflicts: dict[Path, str] = field(default_factory=dict)
    # A sub-agent's question: the parent session, task call and agent type its events carry.
    origin: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.asked:
            self.asked = list(self.files)

    def proposed(self) -> dict[Path, str]:
        return {f.path: f.new_text for f in self.files if f.new_text != f.old_text}


class EditRefused(Exception):
    """An accepted edit that cannot be taken; the message says why."""


Structure = Callable[[Any, type], Any]


def accepted_texts(
    proposal: Proposal, raw: dict[str, Any], structure: Structure, encoding: str
) -> dict[Path, str]:
    """Each proposed file the edit changes, and its text after the edit (a file the edit leaves
    as it was is not in it); raises EditRefused for an edit that is not a change to the
    proposal's documents."""
    try:
        edit: types.WorkspaceEdit = structure(raw, types.WorkspaceEdit)
    except Exception:
        raise EditRefused(
            "not a WorkspaceEdit (documentChanges of TextDocumentEdits and CreateFiles, or changes)"
        ) from None
    edits: dict[Path, list[types.TextEdit]] = {}
    created: set[Path] = set()

    def take(uri: str, text_edits: Sequence[Any], version: int | None, versioned: bool) -> None:
        file = _file_of(proposal, uri)
        if file.path in edits:
            raise EditRefused(f"{uri} is edited twice; send its edits in one TextDocumentEdit")
        if versioned and file.version is not None and version != file.version:
            raise EditRefused(
                f"{uri} is at version {version}, but the proposal was made at version "
                f"{file.version}"
            )
        plain: list[types.TextEdit] = []
        for text_edit in text_edits:
            if not isinstance(text_edit, types.TextEdit):
                raise EditRefused(f"{uri}: only plain TextEdits can be accepted (no snippets)")
            try:
                text_edit.new_text.encode("utf-8")
            except UnicodeEncodeError:  # valid JSON ("\ud800"), but no file can hold it
                raise EditRefused(
                    f"{uri}: a newText is not Unicode text (a lone surrogate)"
                ) from None
            plain.append(text_edit)
        edits[file.path] = plain

    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            doc = change.text_document
            take(doc.uri, change.edits, doc.version, versioned=True)
        elif isinstance(change, types.CreateFile):
            file = _file_of(proposal, change.uri)
            if file.old_text is not None:
                raise EditRefused(
                    f"CreateFile {change.uri}: only a proposed new file can be created"
                )
            created.add(file.path)
        elif isinstance(change, types.DeleteFile):
            raise EditRefused(f"DeleteFile {change.uri}: an accepted change cannot delete a file")
        else:
            raise EditRefused("RenameFile: an accepted change cannot rename a file")
    for uri, text_edits in (edit.changes or {}).items():
        take(uri, text_edits, None, versioned=False)

    texts: dict[Path, str] = {}
    for file in proposal.files:
        if file.path not in edits and file.path not in created:
            continue
        base = file.old_text if file.old_text is not None else ""
        text_edits = edits.get(file.path, [])
        _check_spans(file.uri, base, text_edits, encoding)
        text = apply_text_edits(base, text_edits, encoding)
        if text != file.old_text:
            texts[file.path] = text
    return texts


def _file_of(proposal: Proposal, uri: str) -> ProposedFile:
    path = to_fs_path(uri)
    for file in proposal.files:
        if file.uri == uri or (path is not None and Path(path) == file.path):
            return file
    names = ", ".join(f.uri for f in proposal.files)
    raise EditRefused(f"{uri} is not a document of the proposal ({names})")


def _check_spans(uri: str, text: str, text_edits: list[types.TextEdit], encoding: str) -> None:
    """Refuse edits whose ranges are backwards or overlap (their result would be ambiguous)."""
    spans = sorted(
        (offset_at(text, e.range.start, encoding), offset_at(text, e.range.end, encoding))
        for e in text_edits
    )
    for start, end in spans:
        if end < start:
            raise EditRefused(f"{uri}: a TextEdit's range ends before it starts")
    for (start_a, end_a), (start_b, _) in zip(spans, spans[1:], strict=False):
        if start_b < end_a or start_b == start_a:
            raise EditRefused(f"{uri}: two TextEdits overlap")
