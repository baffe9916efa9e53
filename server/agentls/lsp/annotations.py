"""Edits say who made them: where the client declares
workspace.workspaceEdit.changeAnnotationSupport, every WorkspaceEdit agentls sends it carries one
ChangeAnnotation, "agentls: <session title>" (needsConfirmation false: the user already approved
the change, or allowed it by rule), and each text edit of its documentChanges is an
AnnotatedTextEdit naming it (file operations name it too), so an editor that groups or shows
annotated edits does. An edit given as plain `changes` (a client without documentChanges) cannot
hold AnnotatedTextEdits and is sent as it is."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs
from lsprotocol import types

# The id the edits name their annotation by.
ANNOTATION_ID = "agentls"

# The session's title (None: unknown), for a session id (None: no session).
SessionTitle = Callable[[str | None], Awaitable[str | None]]


def label_for(title: str | None) -> str:
    title = " ".join((title or "").split())
    return f"agentls: {title}" if title else "agentls"


def annotated(edit: types.WorkspaceEdit, label: str) -> types.WorkspaceEdit:
    """`edit` with every text edit and file operation of its documentChanges annotated by one
    ChangeAnnotation `label`; unchanged when it has no documentChanges."""
    if not edit.document_changes:
        return edit
    changes: list[
        types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
    ] = []
    for change in edit.document_changes:
        if isinstance(change, types.TextDocumentEdit):
            edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
                types.AnnotatedTextEdit(
                    range=e.range, new_text=e.new_text, annotation_id=ANNOTATION_ID
                )
                if isinstance(e, types.TextEdit)
                else e
                for e in change.edits
            ]
            changes.append(types.TextDocumentEdit(text_document=change.text_document, edits=edits))
        else:
            changes.append(attrs.evolve(change, annotation_id=ANNOTATION_ID))
    return types.WorkspaceEdit(
        changes=edit.changes,
        document_changes=changes,
        change_annotations={
            **(edit.change_annotations or {}),
            ANNOTATION_ID: types.ChangeAnnotation(label=label, needs_confirmation=False),
        },
    )
