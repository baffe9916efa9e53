"""The navigation tools (outline, type_definition, implementation, callees) through the editor's
own language servers: agent/languageRequest asks the methods the client declared, the answers
reach the model as each tool renders them, and a tool whose method the client did not declare
(and no `languageServers` answers) is not offered at all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentls.protocol.models import LANGUAGE_METHODS
from messages_api import MessagesAPIServer, reply, text
from tests.lsp.editor import Editor
from tests.lsp.test_language_requests import (
    LanguageAnswers,
    answering_editor,
    loc,
    run_tools,
    stop_answering,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

SHAPES = (
    "class Shape:\n"  # 1
    "    def area(self):\n"  # 2
    "        raise NotImplementedError\n"  # 3
    "\n"
    "\n"
    "class Square(Shape):\n"  # 6
    "    def area(self):\n"  # 7
    "        return 4\n"  # 8
    "\n"
    "\n"
    "def report():\n"  # 11
    "    square = Square()\n"  # 12
    "    return square.area()\n"  # 13
)
NAVIGATION = ("outline", "type_definition", "implementation", "callees")


def rng(first: int, start: int, last: int, end: int) -> dict[str, Any]:
    return {"start": {"line": first, "character": start}, "end": {"line": last, "character": end}}


def symbol(name: str, kind: int, first: int, last: int, children: list[Any]) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "range": rng(first, 0, last, 20),
        "selectionRange": rng(first, 4, first, 8),
        "children": children,
    }


def call_item(ed: Editor, name: str, kind: int, line: int) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "uri": ed.uri("nav/shapes.py"),
        "range": rng(line, 0, line + 2, 0),
        "selectionRange": rng(line, 4, line, 4 + len(name)),
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    module_root: Path, module_api: MessagesAPIServer
) -> AsyncIterator[tuple[Editor, LanguageAnswers]]:
    """A client that declares every language method and answers the navigation ones."""
    ed, answers = await answering_editor(
        module_root / "declares", module_api, sorted(LANGUAGE_METHODS), {"languageTimeoutS": 2.0}
    )
    (ed.root / "nav").mkdir()
    (ed.root / "nav" / "shapes.py").write_text(SHAPES)
    report = call_item(ed, "report", 12, 10)
    answers.answers.update(
        {
            "textDocument/documentSymbol": lambda params: [
                symbol("Shape", 5, 0, 2, [symbol("area", 6, 1, 2, [])]),
                symbol("Square", 5, 5, 7, [symbol("area", 6, 6, 7, [])]),
                symbol("report", 12, 10, 12, [symbol("square", 13, 11, 11, [])]),
            ],
            "textDocument/typeDefinition": lambda params: [loc(ed, "nav/shapes.py", 5, 6, 12)],
            "textDocument/implementation": lambda params: [loc(ed, "nav/shapes.py", 6, 8, 12)],
            "textDocument/prepareCallHierarchy": lambda params: [report],
            "callHierarchy/outgoingCalls": lambda params: [
                {"to": call_item(ed, "Square", 5, 5), "fromRanges": [rng(11, 13, 11, 19)]},
                {"to": call_item(ed, "area", 6, 6), "fromRanges": [rng(12, 18, 12, 22)]},
            ],
        }
    )
    yield ed, answers
    await stop_answering(ed, answers)


async def test_the_navigation_tools_answer_from_the_editor(
    editor: tuple[Editor, LanguageAnswers], module_api: MessagesAPIServer
) -> None:
    ed, answers = editor
    answers.asked.clear()
    outline, type_of, implementations, callees = await run_tools(
        ed,
        module_api,
        ("outline", {"path": "nav/shapes.py"}),
        ("type_definition", {"path": "nav/shapes.py", "symbol": "square", "line": 13}),
        ("implementation", {"path": "nav/shapes.py", "symbol": "area", "line": 2}),
        ("callees", {"path": "nav/shapes.py", "symbol": "report"}),
    )
    assert outline == (
        "nav/shapes.py (13 lines), 5 symbols:\n"
        "class Shape 1-3\n  method area 2-3\n"
        "class Square 6-8\n  method area 7-8\n"
        "function report 11-13"  # its local `square` left out
    )
    assert "nav/shapes.py (1)\n  6: class Square(Shape):" in type_of
    assert "nav/shapes.py (1)\n  7: def area(self):" in implementations
    assert callees.splitlines()[1:] == [
        "class Square (nav/shapes.py:6)",
        "  12: square = Square()",
        "method area (nav/shapes.py:7)",
        "  13: return square.area()",
    ]
    asked = [method for method, _ in answers.asked]
    assert asked == [
        "textDocument/documentSymbol",
        "textDocument/typeDefinition",
        "textDocument/implementation",
        "textDocument/prepareCallHierarchy",
        "callHierarchy/outgoingCalls",
    ]
    # The position sent is the symbol's, found near the line the model gave.
    assert answers.asked[1][1]["position"] == {"line": 12, "character": 11}


async def test_a_method_the_editor_did_not_declare_keeps_its_tool_out(
    module_root: Path, module_api: MessagesAPIServer
) -> None:
    ed, answers = await answering_editor(
        module_root / "few", module_api, ["textDocument/definition", "textDocument/references"]
    )
    try:
        start = len(module_api.requests)
        module_api.enqueue(reply(text("done")))
        await ed.prompt(await ed.new_session(), "go")
        offered = {tool["name"] for tool in module_api.requests[start].body["tools"]}
    finally:
        await stop_answering(ed, answers)
    assert {"definition", "references"} <= offered
    assert not set(NAVIGATION) & offered
