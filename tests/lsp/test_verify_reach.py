"""Verification that follows an edit's reach: the new errors in the other files that use a
definition the edit changed, from the editor's own language server (agent/languageRequest:
documentSymbol, references, and diagnostics pushed or pulled).

The test client stands in for the editor and a small Python language server: it answers
documentSymbol and references from the buffers' ASTs and reports, for the files that call into
lib.py, the calls that no longer fit lib.py's functions (as a type checker would)."""

from __future__ import annotations

import ast
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.uris import to_fs_path

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile

pytestmark = pytest.mark.asyncio(loop_scope="module")

# Long enough that a turn which waited it out would overrun the prompt's own timeout (half of
# it), and that timeout long enough for a turn on a loaded machine (the most verifyWaitS allows).
LONG_WAIT_S = 30.0
LIB = 'def greet(name):\n    return "hi " + name\n\n\ndef helper():\n    return 1\n'
APP = 'from lib import greet\n\nprint(greet(name="x"))\n'


@dataclass
class LanguageProfile(Profile):
    """A client that declares agent/languageRequest methods."""

    language_requests: tuple[str, ...] = ()

    def capabilities(self) -> types.ClientCapabilities:
        caps = super().capabilities()
        assert isinstance(caps.experimental, dict)
        caps.experimental["agent"]["languageRequests"] = list(self.language_requests)
        return caps


def _text(editor: Editor, path: Path) -> str:
    buffer = editor.buffers.get(editor.uri(path.name))
    return buffer.text if buffer is not None else path.read_text()


def _range(line: int, start: int, end: int) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": start},
        "end": {"line": line, "character": end},
    }


def document_symbols(source: str) -> list[dict[str, Any]]:
    lines = source.splitlines()
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            column = lines[node.lineno - 1].index(node.name)
            end = node.end_lineno or node.lineno
            out.append(
                {
                    "name": node.name,
                    "kind": 12,
                    "range": _range(node.lineno - 1, 0, 0) | {"end": {"line": end, "character": 0}},
                    "selectionRange": _range(node.lineno - 1, column, column + len(node.name)),
                    "children": [],
                }
            )
    return out


def references(editor: Editor, uri: str, position: dict[str, Any]) -> list[dict[str, Any]]:
    line = _text(editor, Path(to_fs_path(uri) or "")).splitlines()[position["line"]]
    word = re.match(r"\w+", line[position["character"] :])
    assert word is not None
    found = []
    for path in sorted(editor.root.glob("*.py")):
        for n, text_line in enumerate(_text(editor, path).splitlines()):
            if text_line.startswith("def "):
                continue
            for m in re.finditer(rf"\b{word.group()}\b", text_line):
                found.append({"uri": editor.uri(path.name), "range": _range(n, m.start(), m.end())})
    return found


def type_errors(editor: Editor, name: str) -> list[dict[str, Any]]:
    """What a type checker says of the calls in `name` into lib.py."""
    lib = {
        n.name: [a.arg for a in n.args.args]
        for n in ast.parse(_text(editor, editor.root / "lib.py")).body
        if isinstance(n, ast.FunctionDef)
    }
    errors = []
    for node in ast.walk(ast.parse(_text(editor, editor.root / name))):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name not in lib:
                    message = f'"{alias.name}" is unknown import symbol'
                    errors.append({"range": _range(node.lineno - 1, 0, 1), "message": message})
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            for keyword in node.keywords:
                params = lib.get(node.func.id)
                if params is not None and keyword.arg not in params:
                    message = f'No parameter named "{keyword.arg}"'
                    errors.append({"range": _range(node.lineno - 1, 0, 1), "message": message})
    return [e | {"severity": 1, "source": "toycheck"} for e in errors]


def answer_language_requests(editor: Editor, asked: list[tuple[str, str]]) -> None:
    @editor.client.feature("agent/languageRequest")
    def on_language_request(params: Any) -> Any:
        message = dict(params)
        method, inner = message["method"], dict(message["params"])
        uri = inner["textDocument"]["uri"]
        asked.append((method, Path(to_fs_path(uri) or "").name))
        if method == "textDocument/documentSymbol":
            return document_symbols(_text(editor, Path(to_fs_path(uri) or "")))
        if method == "textDocument/references":
            return references(editor, uri, inner["position"])
        if method == "textDocument/diagnostic":
            name = Path(to_fs_path(uri) or "").name
            return {"kind": "full", "items": [] if name == "lib.py" else type_errors(editor, name)}
        return None


def push_after_edits(editor: Editor) -> None:
    """Like a type checker in the editor: after each edit, app.py's diagnostics, pushed."""
    apply = editor.apply

    async def apply_and_check(edit: types.WorkspaceEdit) -> None:
        await apply(edit)
        editor.push_diagnostics(editor.uri("lib.py"), [], None)
        for path in editor.root.glob("*.py"):
            if path.name != "lib.py":
                errors = type_errors(editor, path.name)
                editor.push_diagnostics(editor.uri(path.name), errors, None)

    editor.apply = apply_and_check  # type: ignore[method-assign]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pushing(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    profile = LanguageProfile(
        language_requests=("textDocument/documentSymbol", "textDocument/references")
    )
    editor = await start_editor(
        module_root / "pushing",
        module_api,
        profile,
        {"permissions": {"*": "allow", "read": {"secret_*": "deny"}}, "verifyWaitS": 2.0},
    )
    editor.asked = []  # type: ignore[attr-defined]
    answer_language_requests(editor, editor.asked)  # type: ignore[attr-defined]
    push_after_edits(editor)
    yield editor
    await stop_editor(editor)


def reset(editor: Editor, *more: str) -> None:
    """lib.py and app.py as they were (and copies of app.py named `more`)."""
    for path in editor.root.glob("*.py"):
        path.unlink()
    (editor.root / "lib.py").write_text(LIB)
    (editor.root / "app.py").write_text(APP)
    for name in more:
        (editor.root / name).write_text(APP)
    editor.buffers.clear()
    for name in ("lib.py", "app.py", *more):
        editor.open(name)
        if editor.profile.diagnostics_push:
            editor.push_diagnostics(editor.uri(name), [], 1)


async def edit_result(
    editor: Editor, api: MessagesAPIServer, name: str, old: str, new: str, timeout: float = 30.0
) -> str:
    api.enqueue(
        reply(tool_use("read", {"path": name})),
        reply(tool_use("edit", {"path": name, "old_string": old, "new_string": new})),
        reply(text("ok")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "edit it", timeout=timeout)
    content = api.requests[-1].body["messages"][-1]["content"][0]["content"]
    return str(content)


async def test_a_renamed_parameter_breaks_the_caller(
    pushing: Editor, module_api: MessagesAPIServer
) -> None:
    reset(pushing)
    output = await edit_result(
        pushing,
        module_api,
        "lib.py",
        'def greet(name):\n    return "hi " + name',
        'def greet(who):\n    return "hi " + who',
    )
    assert (
        "Other files using what this edit changed (greet): 1 new error(s) in 1 file(s):" in output
    )
    assert '  app.py:\n    line 3: error [toycheck] No parameter named "name"' in output
    assert "no new errors or warnings in lib.py" in output


async def test_a_file_the_model_may_not_read_is_left_out(
    pushing: Editor, module_api: MessagesAPIServer
) -> None:
    reset(pushing, "secret_use.py")
    output = await edit_result(pushing, module_api, "lib.py", "def greet(name):", "def greet(who):")
    assert "(greet): 1 new error(s) in 1 file(s) (1 file(s) you may not read left out):" in output
    assert "app.py:" in output and "secret_use" not in output


async def test_a_removed_function_breaks_the_import(
    pushing: Editor, module_api: MessagesAPIServer
) -> None:
    reset(pushing)
    output = await edit_result(
        pushing, module_api, "lib.py", 'def greet(name):\n    return "hi " + name\n\n\n', ""
    )
    assert "app.py:" in output
    assert '"greet" is unknown import symbol' in output


async def test_an_edit_that_breaks_no_caller_reports_no_other_file(
    pushing: Editor, module_api: MessagesAPIServer
) -> None:
    reset(pushing)
    asked: list[tuple[str, str]] = pushing.asked  # type: ignore[attr-defined]
    asked.clear()
    output = await edit_result(pushing, module_api, "lib.py", '"hi " + name', '"hello " + name')
    assert "(greet): 1 checked, no new errors." in output
    assert "app.py" not in output
    assert ("textDocument/references", "lib.py") in asked
    # helper() is used nowhere else: nothing about other files at all.
    asked.clear()
    output = await edit_result(pushing, module_api, "lib.py", "return 1", "return 2")
    assert ("textDocument/references", "lib.py") in asked
    assert "Other files" not in output and "app.py" not in output


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pulling(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    profile = LanguageProfile(
        diagnostics_push=False,
        language_requests=(
            "textDocument/documentSymbol",
            "textDocument/references",
            "textDocument/diagnostic",
        ),
    )
    editor = await start_editor(
        module_root / "pulling",
        module_api,
        profile,
        {"permissions": {"*": "allow"}, "verifyWaitS": LONG_WAIT_S},
    )
    editor.asked = []  # type: ignore[attr-defined]
    answer_language_requests(editor, editor.asked)  # type: ignore[attr-defined]
    yield editor
    await stop_editor(editor)


async def test_a_pulling_client_is_asked_not_waited_for(
    pulling: Editor, module_api: MessagesAPIServer
) -> None:
    reset(pulling)
    asked: list[tuple[str, str]] = pulling.asked  # type: ignore[attr-defined]
    asked.clear()
    output = await edit_result(
        pulling,
        module_api,
        "lib.py",
        "def greet(name):",
        "def greet(name, punctuation):",
        timeout=LONG_WAIT_S / 2,  # a wait for a push that never comes would overrun it
    )
    assert "Diagnostics (editor, pulled): no new errors or warnings in lib.py" in output
    # Before and after, for the edited file and for its caller.
    assert asked.count(("textDocument/diagnostic", "lib.py")) == 2
    assert asked.count(("textDocument/diagnostic", "app.py")) == 2
    # The type checker says nothing of a missing argument; agentls' own check of the call does.
    assert "app.py:" in output
    assert "missing a required argument: 'punctuation'" in output
