"""A small real language server (pygls) for what jedi-language-server lacks: a call hierarchy,
and diagnostics published without a version. It reads the open documents only: a caller is a
`def` whose body calls the name; a diagnostic marks each line with TODO.

Run as `python tiny_server.py` (stdio)."""

from __future__ import annotations

import re

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("tiny", "1")


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


def _publish(uri: str) -> None:
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
