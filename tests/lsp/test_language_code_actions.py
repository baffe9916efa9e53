"""Code actions through the editor's language servers (agent/languageRequest), with a real LSP
client answering as VS Code does: it declares every method but workspace/executeCommand, gives
actions with their edits resolved, and resolves by returning the action. An action's edit lands
as ONE workspace/applyEdit after the question; a command-only action is refused without the
editor being asked to run it (it would apply the command's edits itself)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentls.protocol.models import LANGUAGE_METHODS
from messages_api import MessagesAPIServer
from tests.lsp.editor import Editor
from tests.lsp.test_language_requests import (
    MAIN,
    LanguageAnswers,
    answering_editor,
    run_tools,
    stop_answering,
    text_edit,
    write_project,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

EXECUTE = "workspace/executeCommand"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def vscode(
    module_root: Path, module_api: MessagesAPIServer
) -> AsyncIterator[tuple[Editor, LanguageAnswers]]:
    methods = sorted(LANGUAGE_METHODS - {EXECUTE})
    editor, answers = await answering_editor(module_root / "actions", module_api, methods)
    yield editor, answers
    await stop_answering(editor, answers)


def actions(editor: Editor, folder: str) -> list[dict[str, Any]]:
    uri = editor.uri(f"{folder}/main.py")
    return [
        {
            "title": "Add a docstring",
            "kind": "refactor.rewrite",
            "isPreferred": True,
            "edit": {"changes": {uri: [text_edit(3, 0, 0, '"""Run it."""\n')]}},
        },
        {
            "title": "Create a stub",
            "kind": "quickfix",
            "command": {"title": "Create a stub", "command": "x.createStub", "arguments": [uri]},
        },
    ]


async def test_an_editors_action_is_applied_as_one_reviewed_edit(
    vscode: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = vscode
    where = write_project(ed.root, "apply")
    answers.answers["textDocument/diagnostic"] = lambda p: {"kind": "full", "items": []}
    answers.answers["textDocument/codeAction"] = lambda p: actions(ed, "apply")
    answers.answers["codeAction/resolve"] = lambda p: p
    answers.asked.clear()
    edits_before = len(ed.applied_edits)
    at = {"path": "apply/main.py", "line": 4, "end_line": 5}
    _, listed, applied = await run_tools(
        ed,
        module_api,
        ("read", {"path": "apply/main.py"}),
        ("code_actions", at),
        ("apply_code_action", {**at, "title": "Add a docstring"}),
    )
    assert "  1. Add a docstring [refactor.rewrite] (preferred)" in listed
    assert "  2. Create a stub [quickfix] (runs the language server's command x.createStub)" in (
        listed
    )
    # The range asked about: lines 4-5 (0-based 3-4), to the end of line 5.
    asked = dict(answers.asked)["textDocument/codeAction"]
    assert asked["range"] == {
        "start": {"line": 3, "character": 0},
        "end": {"line": 4, "character": len("    return add(1, 2)")},
    }
    assert "Applied 'Add a docstring': 1 file changed." in applied
    [edit] = ed.applied_edits[edits_before:]
    [change] = edit["documentChanges"]
    assert change["textDocument"]["uri"] == ed.uri("apply/main.py")
    lines = MAIN.splitlines(keepends=True)
    assert (where / "main.py").read_text() == "".join(lines[:3] + ['"""Run it."""\n'] + lines[3:])


async def test_an_editors_command_only_action_is_refused_without_running_it(
    vscode: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = vscode
    where = write_project(ed.root, "command")
    answers.answers["textDocument/diagnostic"] = lambda p: {"kind": "full", "items": []}
    answers.answers["textDocument/codeAction"] = lambda p: actions(ed, "command")
    answers.asked.clear()
    edits_before = len(ed.applied_edits)
    at = {"path": "command/main.py", "line": 1, "title": "Create a stub"}
    _, refused = await run_tools(
        ed, module_api, ("read", {"path": "command/main.py"}), ("apply_code_action", at)
    )
    assert "only runs the command x.createStub, which was not run" in refused
    assert "Nothing was changed." in refused
    assert EXECUTE not in [method for method, _ in answers.asked]
    assert ed.applied_edits[edits_before:] == []
    assert (where / "main.py").read_text() == MAIN


async def test_an_action_given_only_when_asked_by_kind_is_found_to_apply(
    vscode: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = vscode
    where = write_project(ed.root, "source")
    uri = ed.uri("source/main.py")
    organize = {
        "title": "Organize imports",
        "kind": "source.organizeImports",
        "edit": {"changes": {uri: [text_edit(0, 0, 0, "import os\n")]}},
    }

    def by_kind(params: dict[str, Any]) -> list[dict[str, Any]]:
        # Like servers that give source actions only when `only` asks for them.
        only = params["context"].get("only") or []
        return [organize] if any(k == "source" or k.startswith("source.") for k in only) else []

    answers.answers["textDocument/diagnostic"] = lambda p: {"kind": "full", "items": []}
    answers.answers["textDocument/codeAction"] = by_kind
    answers.asked.clear()
    at = {"path": "source/main.py", "line": 1, "title": "Organize imports"}
    _, applied = await run_tools(
        ed, module_api, ("read", {"path": "source/main.py"}), ("apply_code_action", at)
    )
    assert "Applied 'Organize imports': 1 file changed." in applied
    kinds = [p["context"].get("only") for m, p in answers.asked if m == "textDocument/codeAction"]
    assert kinds == [None, ["source"]]
    assert (where / "main.py").read_text() == "import os\n" + MAIN
