"""The finish gate under `agentls serve`: an editor that pushes its diagnostics (agent/diagnostics)
for each document version, stale ones first as real servers do; the gate takes the push for the
version the turn wrote, sends its new error back, and the client hears each check as an
agent/event."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from messages_api import MessagesAPIServer, Reply, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile, diag

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gated(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    editor = await start_editor(
        module_root / "gated",
        module_api,
        Profile(),
        {"permissions": {"*": "allow"}, "finishGate": "errors", "verifyWaitS": 5.0},
    )
    yield editor
    await stop_editor(editor)


async def test_the_editors_error_for_the_version_written_goes_back_and_is_fixed(
    gated: Editor, module_api: MessagesAPIServer
) -> None:
    editor = gated
    (editor.root / "calc.py").write_text("def f():\n    return 1\n")
    uri = editor.uri("calc.py")
    editor.open("calc.py")
    editor.push_diagnostics(uri, [diag(0, "an old warning", severity=2)], 1)
    editor.stale_push_first = True  # each edit: first a push for the version before it
    editor.diagnostics_after_edit["calc.py"] = [
        diag(0, "an old warning", severity=2),
        diag(1, '"undefined_name" is not defined'),
    ]
    broken = {"path": "calc.py", "old_string": "return 1", "new_string": "return undefined_name"}
    fixed = {"path": "calc.py", "old_string": "return undefined_name", "new_string": "return 2"}

    def fix(_: dict[str, Any]) -> Reply:
        # The editor's language server has nothing to say of the fixed text.
        editor.diagnostics_after_edit["calc.py"] = [diag(0, "an old warning", severity=2)]
        return reply(tool_use("edit", fixed))

    module_api.enqueue(
        reply(tool_use("read", {"path": "calc.py"})),
        reply(tool_use("edit", broken)),
        reply(text("Done.")),
        fix,
        reply(text("Fixed.")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "change f")
    gates = editor.session_events(session, "finish-gate")
    assert [(g["status"], g["checked"]) for g in gates] == [("sent-back", 1), ("clean", 1)]
    assert gates[0]["problems"] == [
        {
            "path": "calc.py",
            "line": 2,
            "severity": "error",
            "message": '"undefined_name" is not defined',
            "source": "pyright",
        }
    ]
    told = module_api.requests[3].body["messages"][-1]["content"]
    said = told if isinstance(told, str) else "".join(b.get("text", "") for b in told)
    assert 'calc.py:2: error [pyright] "undefined_name" is not defined' in said, said
    assert "an old warning" not in said
