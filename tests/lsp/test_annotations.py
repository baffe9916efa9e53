"""Edits say who made them (lsp/annotations.py), through the real protocol: a client that
declares changeAnnotationSupport gets every agent edit annotated "agentls: <session title>"
without a confirmation; one that does not gets plain text edits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile


async def _edit_in_a_session(editor: Editor, api: MessagesAPIServer) -> dict[str, Any]:
    (editor.root / "a.py").write_text("a = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.py"})),
        reply(tool_use("edit", {"path": "a.py", "old_string": "a = 1", "new_string": "a = 2"})),
        reply(text("ok")),
    )
    session = await editor.new_session("Bump  a")
    await editor.prompt(session, "bump a")
    assert (editor.root / "a.py").read_text() == "a = 2\n"
    [edit] = editor.applied_edits
    return edit


@pytest.mark.parametrize("declared", [True, False])
async def test_edits_carry_the_sessions_annotation_where_the_client_supports_it(
    tmp_path: Path, api: MessagesAPIServer, declared: bool
) -> None:
    profile = Profile(change_annotations=declared)
    editor = await start_editor(tmp_path, api, profile, {"permissions": {"*": "allow"}})
    try:
        edit = await _edit_in_a_session(editor, api)
    finally:
        await stop_editor(editor)
    [document_edit] = edit["documentChanges"]
    text_edits = document_edit["edits"]
    assert text_edits and document_edit["textDocument"]["uri"].endswith("/a.py")
    if declared:
        assert edit["changeAnnotations"] == {
            "agentls": {"label": "agentls: Bump a", "needsConfirmation": False}
        }
        assert all(e["annotationId"] == "agentls" for e in text_edits)
    else:
        assert "changeAnnotations" not in edit
        assert all("annotationId" not in e for e in text_edits)
