"""agent/languageRequest: the language tools ask the editor's own language servers.

A real LSP client (pytest-lsp) declares capabilities.experimental.agent.languageRequests and
answers the requests as an editor would from its other language servers; the scripted Messages
API calls the tools; what reaches the model is asserted. A client that declares nothing falls back
(no language server configured: the tool says so); a malformed answer, an error and no answer are
clear errors; a rename lands as ONE workspace/applyEdit with a TextDocumentEdit per file.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.conftest import start_editor, stop_editor
from tests.lsp.editor import Editor, Profile
from tests.waiting import until

pytestmark = pytest.mark.asyncio(loop_scope="module")

UTIL = "def add(a, b):\n    return a + b\n"
MAIN = "from util import add\n\n\ndef main():\n    return add(1, 2)\n"
TOTAL = "from util import add\n\nTOTAL = add(3, 4)\n"

Answer = Callable[[dict[str, Any]], Any]


@dataclass
class LanguageProfile(Profile):
    """A client that also answers agent/languageRequest for `language_requests`."""

    language_requests: tuple[str, ...] = ()

    def capabilities(self) -> types.ClientCapabilities:
        caps = super().capabilities()
        assert isinstance(caps.experimental, dict)
        caps.experimental["agent"]["languageRequests"] = list(self.language_requests)
        return caps


@dataclass
class LanguageAnswers:
    """How the test editor answers agent/languageRequest, and what it was asked."""

    answers: dict[str, Answer] = field(default_factory=dict)
    asked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)  # by the server's $/cancelRequest
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def install(self, editor: Editor) -> None:
        @editor.client.feature("agent/languageRequest")
        async def on_language_request(params: Any) -> Any:
            request = dict(params)
            self.asked.append((request["method"], request["params"]))
            answer = self.answers.get(request["method"])
            if answer is None:
                try:
                    await self.released.wait()  # never answers
                except asyncio.CancelledError:
                    self.cancelled.append(request["method"])
                    raise
                return None
            return answer(request["params"])


# What a client declares to answer a rename (prepareRename, then rename).
RENAME_METHODS = ("textDocument/prepareRename", "textDocument/rename")


async def answering_editor(
    folder: Path,
    api: MessagesAPIServer,
    methods: Sequence[str],
    agent_options: dict[str, Any] | None = None,
) -> tuple[Editor, LanguageAnswers]:
    """A test editor that declares `methods` as its languageRequests and answers them through a
    LanguageAnswers (stop it with stop_answering)."""
    profile = LanguageProfile(language_requests=tuple(methods))
    editor = await start_editor(folder, api, profile, agent_options)
    answers = LanguageAnswers()
    answers.install(editor)
    return editor, answers


async def stop_answering(editor: Editor, answers: LanguageAnswers) -> None:
    answers.released.set()  # a request left unanswered ends
    await stop_editor(editor)


def loc(editor: Editor, name: str, line: int, start: int, end: int) -> dict[str, Any]:
    return {
        "uri": editor.uri(name),
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": end},
        },
    }


def text_edit(line: int, start: int, end: int, new: str) -> dict[str, Any]:
    return {
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": end},
        },
        "newText": new,
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    module_root: Path, module_api: MessagesAPIServer
) -> AsyncIterator[tuple[Editor, LanguageAnswers]]:
    """A VS Code-like client that answers every language method."""
    from agentls.protocol.models import LANGUAGE_METHODS

    editor, answers = await answering_editor(
        module_root / "declares", module_api, sorted(LANGUAGE_METHODS), {"languageTimeoutS": 2.0}
    )
    yield editor, answers
    await stop_answering(editor, answers)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A client that declares no languageRequests (and no languageServers are configured)."""
    editor = await start_editor(module_root / "plain", module_api, Profile())
    yield editor
    await stop_editor(editor)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def partial(
    module_root: Path, module_api: MessagesAPIServer
) -> AsyncIterator[tuple[Editor, LanguageAnswers]]:
    """A client that answers textDocument/hover only."""
    methods = ("textDocument/hover", "textDocument/nonsense")
    editor, answers = await answering_editor(module_root / "partial", module_api, methods)
    yield editor, answers
    await stop_answering(editor, answers)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def headless(module_root: Path, module_api: MessagesAPIServer) -> AsyncIterator[Editor]:
    """A client without the capability, and `languageServers` naming jedi-language-server."""
    jedi = shutil.which("jedi-language-server", path=os.path.dirname(sys.executable))
    if jedi is None:
        pytest.fail("jedi-language-server is not installed (pip install -e '.[dev]')")
    servers = {"python": {"command": [jedi], "extensions": [".py"]}}
    editor = await start_editor(
        module_root / "headless", module_api, Profile(), {"languageServers": servers}
    )
    yield editor
    await stop_editor(editor)


def write_project(root: Path, folder: str) -> Path:
    """The three files in a folder of their own (the editor keeps the buffers it edited)."""
    where = root / folder
    where.mkdir()
    (where / "util.py").write_text(UTIL)
    (where / "main.py").write_text(MAIN)
    (where / "total.py").write_text(TOTAL)
    return where


def tool_results(api: MessagesAPIServer, start: int) -> list[str]:
    """The tool results the model was sent after request `start`, in order."""
    out: list[str] = []
    for request in api.requests[start:]:
        last = request.body["messages"][-1]
        if last["role"] != "user" or isinstance(last["content"], str):
            continue
        for block in last["content"]:
            if block.get("type") == "tool_result":
                content = block.get("content", "")
                if isinstance(content, list):
                    content = "".join(c.get("text", "") for c in content)
                out.append(str(content))
    return out


async def run_tools(
    editor: Editor, api: MessagesAPIServer, *calls: tuple[str, dict[str, Any]]
) -> list[str]:
    start = len(api.requests)
    api.enqueue(*(reply(tool_use(name, args)) for name, args in calls), reply(text("done")))
    session = await editor.new_session()
    await editor.prompt(session, "go")
    return tool_results(api, start)


async def test_references_come_from_the_editor(
    editor: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = editor
    write_project(ed.root, "refs")
    answers.answers["textDocument/references"] = lambda params: [
        loc(ed, "refs/util.py", 0, 4, 7),
        loc(ed, "refs/main.py", 0, 17, 20),
        loc(ed, "refs/main.py", 4, 11, 14),
        loc(ed, "refs/total.py", 2, 8, 11),
    ]
    answers.asked.clear()
    [result] = await run_tools(
        ed, module_api, ("references", {"path": "refs/util.py", "symbol": "add", "line": 1})
    )
    method, params = answers.asked[-1]
    assert method == "textDocument/references"
    assert params["textDocument"]["uri"] == ed.uri("refs/util.py")
    assert params["position"] == {"line": 0, "character": 4}
    # Grouped by file, with the line of each hit: what the editor's language server said.
    assert "main.py" in result and "total.py" in result
    assert "TOTAL = add(3, 4)" in result and "return add(1, 2)" in result


def rename_answers(ed: Editor, answers: LanguageAnswers, folder: str) -> None:
    answers.answers["textDocument/prepareRename"] = lambda params: {
        "range": loc(ed, f"{folder}/util.py", 0, 4, 7)["range"],
        "placeholder": "add",
    }
    answers.answers["textDocument/rename"] = lambda params: {
        "changes": {
            ed.uri(f"{folder}/util.py"): [text_edit(0, 4, 7, params["newName"])],
            ed.uri(f"{folder}/main.py"): [
                text_edit(0, 17, 20, params["newName"]),
                text_edit(4, 11, 14, params["newName"]),
            ],
        }
    }


def rename_calls(folder: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read", {"path": f"{folder}/util.py"}),
        ("read", {"path": f"{folder}/main.py"}),
        ("rename", {"path": f"{folder}/util.py", "symbol": "add", "new_name": "plus"}),
    ]


async def test_rename_is_one_workspace_edit_over_both_files(
    editor: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = editor
    where = write_project(ed.root, "rename")
    rename_answers(ed, answers, "rename")
    answers.asked.clear()
    edits_before = len(ed.applied_edits)
    *_, result = await run_tools(ed, module_api, *rename_calls("rename"))
    assert [m for m, _ in answers.asked] == [
        "textDocument/prepareRename",
        "textDocument/rename",
    ]
    assert answers.asked[-1][1]["newName"] == "plus"
    new_edits = ed.applied_edits[edits_before:]
    assert len(new_edits) == 1, new_edits
    document_changes = new_edits[0]["documentChanges"]
    assert sorted(c["textDocument"]["uri"] for c in document_changes) == sorted(
        [ed.uri("rename/util.py"), ed.uri("rename/main.py")]
    )
    assert (where / "util.py").read_text() == UTIL.replace("add", "plus")
    assert (where / "main.py").read_text() == MAIN.replace("add", "plus")
    assert (where / "total.py").read_text() == TOTAL  # the editor's edit did not name it
    assert "main.py" in result and "util.py" in result


async def test_a_rename_never_writes_an_unsaved_buffer_to_disk(
    editor: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = editor
    where = write_project(ed.root, "unsaved")
    ed.open("unsaved/main.py")
    typed = MAIN + "# the user's unsaved line\n"
    ed.type_text("unsaved/main.py", typed)
    rename_answers(ed, answers, "unsaved")
    edits_before = len(ed.applied_edits)
    *_, result = await run_tools(ed, module_api, *rename_calls("unsaved"))
    [edit] = ed.applied_edits[edits_before:]
    versions = {
        c["textDocument"]["uri"]: c["textDocument"].get("version") for c in edit["documentChanges"]
    }
    # The open buffer's edit names its version (the editor refuses it if the user typed since).
    assert versions == {ed.uri("unsaved/main.py"): 2, ed.uri("unsaved/util.py"): None}
    assert ed.buffers[ed.uri("unsaved/main.py")].text == typed.replace("add", "plus")
    assert (where / "main.py").read_text() == MAIN  # the user's unsaved work stays theirs
    assert (where / "util.py").read_text() == UTIL.replace("add", "plus")
    assert "unsaved changes" in result


async def test_a_refused_rename_changes_no_file(
    editor: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = editor
    where = write_project(ed.root, "refused")
    rename_answers(ed, answers, "refused")
    ed.refuse_edits_with = "the document changed"
    try:
        *_, result = await run_tools(ed, module_api, *rename_calls("refused"))
    finally:
        ed.refuse_edits_with = None
    assert "no file was changed" in result and "the document changed" in result
    assert (where / "util.py").read_text() == UTIL
    assert (where / "main.py").read_text() == MAIN


async def test_a_malformed_answer_is_a_clear_error(
    editor: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = editor
    write_project(ed.root, "malformed")
    answers.answers["textDocument/references"] = lambda params: {"uri": 1}
    [result] = await run_tools(
        ed, module_api, ("references", {"path": "malformed/util.py", "symbol": "add"})
    )
    assert "not a valid LSP result" in result


async def test_an_editor_error_and_no_answer_are_clear_errors(
    editor: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = editor
    write_project(ed.root, "errors")

    def fails(params: dict[str, Any]) -> Any:
        raise RuntimeError("tsserver crashed")

    answers.answers["textDocument/definition"] = fails
    answers.answers.pop("textDocument/hover", None)  # never answered: languageTimeoutS is 2 s
    results = await run_tools(
        ed,
        module_api,
        ("definition", {"path": "errors/main.py", "symbol": "add", "line": 5}),
        ("hover", {"path": "errors/main.py", "symbol": "add", "line": 5}),
    )
    assert "tsserver crashed" in results[0]
    assert "did not answer textDocument/hover within 2 s" in results[1]
    # The server gave up on it with $/cancelRequest.
    await until(lambda: answers.cancelled, "the server cancelled the request")
    assert answers.cancelled == ["textDocument/hover"]


async def test_a_client_without_the_capability_falls_back(
    plain: Editor, module_api: MessagesAPIServer
) -> None:
    write_project(plain.root, "plain")
    [result] = await run_tools(
        plain, module_api, ("references", {"path": "plain/util.py", "symbol": "add"})
    )
    # No editor answer and no `languageServers`: the tool says which setting would help.
    assert "languageServers" in result


async def test_only_what_the_client_declared_goes_to_the_editor(
    partial: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = partial
    write_project(ed.root, "partial")
    answers.answers["textDocument/hover"] = lambda params: {
        "contents": {"kind": "markdown", "value": "```python\ndef add(a, b)\n```"}
    }
    hover, references = await run_tools(
        ed,
        module_api,
        ("hover", {"path": "partial/util.py", "symbol": "add"}),
        ("references", {"path": "partial/util.py", "symbol": "add"}),
    )
    assert "def add(a, b)" in hover
    assert [m for m, _ in answers.asked] == ["textDocument/hover"]
    assert "languageServers" in references


async def test_without_the_capability_agentls_starts_the_configured_server(
    headless: Editor, module_api: MessagesAPIServer
) -> None:
    write_project(headless.root, "headless")
    [result] = await run_tools(
        headless, module_api, ("references", {"path": "headless/util.py", "symbol": "add"})
    )
    # jedi-language-server, started by agentls, found the uses in both other files.
    assert "headless/main.py" in result and "headless/total.py" in result, result
    assert "TOTAL = add(3, 4)" in result
