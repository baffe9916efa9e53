"""A small real language server (pygls) for what jedi-language-server lacks: a call hierarchy,
and diagnostics published without a version. It reads the open documents only: a caller is a
`def` whose body calls the name; a diagnostic marks each line with TODO.

`--loading S` makes it load like pyright: until S seconds after `initialized` (never, when S is
`never`) its `references` see the open documents only, and its loading is announced as
`window/workDoneProgress/create` + `$/progress` begin ... end, beside a notification of its own
(`tiny/beginProgress`); its first diagnostics come once it has loaded. Its first `references`
is answered ContentModified (the document changed under it), as servers do.

`--quiet`: it publishes no diagnostics at all.

Run as `python tiny_server.py [--loading S] [--quiet]` (stdio)."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified
from pygls.lsp.server import LanguageServer

server = LanguageServer("tiny", "1")
LOADING = sys.argv[sys.argv.index("--loading") + 1] if "--loading" in sys.argv else None
QUIET = "--quiet" in sys.argv  # publishes no diagnostics at all
state = {"loaded": LOADING is None, "references": 0}


def _word_at(text: str, position: types.Position) -> str:
    line = text.splitlines()[position.line]
    for match in re.finditer(r"\w+", line):
        if match.start() <= position.character <= match.end():
            return match.group(0)
    return ""


def _item(name: str, uri: str, line: int, column: int) -> types.CallHierarchyItem:
    rng = types.Range(types.Position(line, column), types.Position(line, column + len(name)))
    return types.CallHierarchyItem(
        name=name, kind=types.SymbolKind.Function, uri=uri, range=rng, selection_range=rng
    )


@server.feature(types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
def prepare(params: types.CallHierarchyPrepareParams) -> list[types.CallHierarchyItem]:
    doc = server.workspace.get_text_document(params.text_document.uri)
    name = _word_at(doc.source, params.position)
    return [_item(name, doc.uri, params.position.line, params.position.character)]


@server.feature(types.CALL_HIERARCHY_INCOMING_CALLS)
def incoming(
    params: types.CallHierarchyIncomingCallsParams,
) -> list[types.CallHierarchyIncomingCall]:
    name = params.item.name
    calls = []
    for uri, doc in server.workspace.text_documents.items():
        caller = None
        for number, line in enumerate(doc.source.splitlines()):
            defined = re.match(r"\s*def (\w+)", line)
            if defined:
                caller = _item(defined.group(1), uri, number, line.index(defined.group(1)))
                continue
            call = re.search(r"\b" + re.escape(name) + r"\(", line)
            if call and caller is not None:
                at = types.Range(
                    types.Position(number, call.start()), types.Position(number, call.end() - 1)
                )
                calls.append(types.CallHierarchyIncomingCall(from_=caller, from_ranges=[at]))
    return calls


@server.feature(types.INITIALIZED)
async def initialized(params: types.InitializedParams) -> None:
    if LOADING is None:
        return
    token = "tiny-loading"
    await server.work_done_progress.create_async(token)
    server.protocol.notify("tiny/beginProgress", {})
    server.work_done_progress.begin(token, types.WorkDoneProgressBegin(title="Loading"))
    if LOADING == "never":
        return
    await asyncio.sleep(float(LOADING))
    state["loaded"] = True
    server.work_done_progress.end(token, types.WorkDoneProgressEnd())
    server.protocol.notify("tiny/endProgress", {})
    for uri in list(server.workspace.text_documents):
        _publish(uri)


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
def references(params: types.ReferenceParams) -> list[types.Location]:
    state["references"] += 1
    if state["references"] == 1:
        raise JsonRpcContentModified()
    doc = server.workspace.get_text_document(params.text_document.uri)
    name = _word_at(doc.source, params.position)
    sources = {uri: d.source for uri, d in server.workspace.text_documents.items()}
    if state["loaded"]:
        root = Path(server.workspace.root_path or ".")
        for file in sorted(root.rglob("*.py")):
            sources.setdefault(file.as_uri(), file.read_text())
    found = []
    for uri, source in sources.items():
        for number, line in enumerate(source.splitlines()):
            for match in re.finditer(r"\b" + re.escape(name) + r"\b", line):
                start = types.Position(number, match.start())
                end = types.Position(number, match.end())
                found.append(types.Location(uri=uri, range=types.Range(start, end)))
    return found


def _publish(uri: str) -> None:
    if not state["loaded"] or QUIET:
        return  # diagnostics come once the workspace is loaded
    doc = server.workspace.get_text_document(uri)
    diagnostics = [
        types.Diagnostic(
            range=types.Range(types.Position(n, 0), types.Position(n, len(line))),
            message="a TODO is left",
            severity=types.DiagnosticSeverity.Warning,
        )
        for n, line in enumerate(doc.source.splitlines())
        if "TODO" in line
    ]
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
    )


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def opened(params: types.DidOpenTextDocumentParams) -> None:
    _publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def changed(params: types.DidChangeTextDocumentParams) -> None:
    _publish(params.text_document.uri)


if __name__ == "__main__":
    server.start_io()
