"""The wait for the editor's diagnostics after an edit ends when there is nothing left to wait for:
at once for a file type no language server in the editor checks, as soon as the push for the new
version has settled otherwise, and never on a stale push."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile, diag

pytestmark = pytest.mark.asyncio(loop_scope="module")

# How long the editor's diagnostics are waited for (verifyWaitS, its largest value): long enough
# that a push this long after an edit tells a turn that waited from one that did not.
LONG_WAIT_S = 30.0


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def patient(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(
        module_root / "patient",
        module_api,
        Profile(),
        {"permissions": {"*": "allow"}, "verifyWaitS": LONG_WAIT_S},
    )
    yield editor
    await stop_editor(editor)


async def edit_result(editor: Editor, api: MessagesAPIServer, name: str, old: str, new: str) -> str:
    """Run a turn that reads and edits `name` (old -> new) and return the edit's tool result."""
    api.enqueue(
        reply(tool_use("read", {"path": name})),
        reply(tool_use("edit", {"path": name, "old_string": old, "new_string": new})),
        reply(text("ok")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "edit it", timeout=3 * LONG_WAIT_S)
    content = api.requests[-1].body["messages"][-1]["content"][0]["content"]
    return str(content)


async def test_a_file_type_never_checked_does_not_wait(
    patient: Editor, module_api: MessagesAPIServer
) -> None:
    # The editor has never pushed diagnostics for Markdown. Its push for the edit comes half the
    # wait after it: a turn that waited for the editor would report its problem; one that did not
    # wait has its result long before, saying the editor reports none for the file type.
    (patient.root / "notes.md").write_text("# Notes\n\nold line\n")
    patient.diagnostics_after_edit["notes.md"] = [diag(2, "a late Markdown problem")]
    patient.diagnostics_delay_s = LONG_WAIT_S / 2
    try:
        output = await edit_result(patient, module_api, "notes.md", "old line", "new line")
    finally:
        patient.diagnostics_delay_s = 0.0
        del patient.diagnostics_after_edit["notes.md"]
    assert (patient.root / "notes.md").read_text() == "# Notes\n\nnew line\n"
    assert output.endswith(
        "Diagnostics (editor): none for notes.md; the editor has reported none for its file type "
        "in this session."
    ), output
    assert "none arrived" not in output and "a late Markdown problem" not in output


async def test_a_never_checked_python_file_gets_own_checks(
    module_root: Path, module_api: MessagesAPIServer
) -> None:
    # A fresh server: the editor pushes diagnostics, but none for Python yet.
    editor = await start_editor(
        module_root / "nopython", module_api, Profile(), {"permissions": {"*": "allow"}}
    )
    try:
        (editor.root / "m.py").write_text("def f():\n    return 1\n")
        output = await edit_result(editor, module_api, "m.py", "return 1", "return (")
    finally:
        await stop_editor(editor)
    assert "reported none for its file type" in output
    assert (
        "Diagnostics (agentls syntax check only: not names, types or tests): 1 new problem(s) in m.py"
        in output
    )
    assert "SyntaxError" in output


async def test_a_late_push_for_a_checked_type_is_reported(
    patient: Editor, module_api: MessagesAPIServer
) -> None:
    (patient.root / "late.py").write_text("def f():\n    return 1\n")
    patient.open("late.py")
    patient.push_diagnostics(patient.uri("late.py"), [], 1)
    patient.diagnostics_after_edit["late.py"] = [diag(1, '"late_name" is not defined')]
    patient.diagnostics_delay_s = 0.3
    try:
        output = await edit_result(patient, module_api, "late.py", "return 1", "return late_name")
    finally:
        patient.diagnostics_delay_s = 0.0
    assert "1 new problem(s) in late.py" in output
    assert '"late_name" is not defined' in output


async def test_a_stale_first_push_is_not_the_answer(
    patient: Editor, module_api: MessagesAPIServer
) -> None:
    (patient.root / "stale.py").write_text("def g():\n    return 2\n")
    patient.open("stale.py")
    patient.push_diagnostics(patient.uri("stale.py"), [], 1)
    patient.diagnostics_after_edit["stale.py"] = [diag(1, '"fresh_name" is not defined')]
    patient.diagnostics_delay_s = 0.3
    patient.stale_push_first = True
    try:
        output = await edit_result(patient, module_api, "stale.py", "return 2", "return fresh_name")
    finally:
        patient.diagnostics_delay_s = 0.0
        patient.stale_push_first = False
    assert '"fresh_name" is not defined' in output
    assert "no new errors" not in output


async def test_the_first_push_for_a_type_restores_the_full_wait(
    patient: Editor, module_api: MessagesAPIServer
) -> None:
    (patient.root / "conf.yaml").write_text("key: 1\n")
    patient.open("conf.yaml")
    # A YAML language server appears: its first push makes YAML a checked type.
    patient.push_diagnostics(patient.uri("conf.yaml"), [], 1)
    patient.diagnostics_after_edit["conf.yaml"] = [diag(0, "duplicate key", source="yaml")]
    patient.diagnostics_delay_s = 0.3
    try:
        output = await edit_result(patient, module_api, "conf.yaml", "key: 1", "key: [")
    finally:
        patient.diagnostics_delay_s = 0.0
    assert "1 new problem(s) in conf.yaml" in output and "duplicate key" in output
