"""agent/approve's `edit` (partial accept) from a buggy or hostile client: an edit that reaches past
the proposal (another document, a link in or out, a resource operation, overlapping ranges, another
decision, session or question, text over the size limit or not Unicode, an accept after the user
typed). Real `agentls serve` processes over stdio; each attack is counted in the security table."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agentls.tools.support.file_writes import MAX_EDIT_BYTES
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.lsp.editor import Editor
from tests.lsp.test_language_requests import (
    LanguageAnswers,
    rename_answers,
    rename_calls,
    write_project,
)
from tests.security.conftest import SecurityFigures
from tests.security.edits.support import (
    ACCEPT,
    NEW,
    OLD,
    PAYLOAD,
    approve,
    refused,
    snapshot,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


# ---- agent/approve's edit -------------------------------------------------------------------


async def propose(
    editor: Editor, api: MessagesAPIServer, name: str, old: str, new: str
) -> tuple[str, dict[str, Any], asyncio.Future[dict[str, Any]]]:
    (editor.root / name).write_text(old)
    api.enqueue(
        reply(tool_use("read", {"path": name})),
        reply(tool_use("write", {"path": name, "content": new})),
        reply(text("done")),
    )
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    request = await editor.wait_event(session, "permission-request")
    return session, request, turn


def doc_edit(uri: str, edits: list[dict[str, Any]], version: int | None = None) -> dict[str, Any]:
    return {"textDocument": {"uri": uri, "version": version}, "edits": edits}


def whole(text_: str) -> dict[str, Any]:
    """One TextEdit putting text_ at the start of a document."""
    zero = {"line": 0, "character": 0}
    return {"range": {"start": zero, "end": zero}, "newText": text_}


async def test_an_accepted_edit_lands_only_on_the_proposals_file(
    panel: Editor, api: MessagesAPIServer, root: Path, security_figures: SecurityFigures
) -> None:
    """One open question (a write of prop.py), answered by a hostile client in every way that
    reaches past it; each is refused naming `edit`, the question stays open, and no file of the
    workspace nor outside it changes. Then the plain proposal is accepted."""
    editor = panel
    outside = root / "panel-outside"
    outside.mkdir()
    (outside / "bashrc").write_text("# mine\n")
    (editor.root / "other.py").write_text("other = 1\n")
    (editor.root / "sub").mkdir()
    (editor.root / "link.py").symlink_to(editor.root / "prop.py")
    (editor.root / "out.py").symlink_to(outside / "bashrc")
    session, request, turn = await propose(editor, api, "prop.py", OLD, NEW)
    [change] = request["edit"]["documentChanges"]
    uri, version, hunks = (
        change["textDocument"]["uri"],
        change["textDocument"]["version"],
        change["edits"],
    )
    mine = [whole(PAYLOAD)]
    other_session = await editor.new_session()
    attacks: list[tuple[dict[str, Any], str]] = [
        # Another document than the proposal's, however it is spelled.
        (
            approve(
                session, request, {"documentChanges": [doc_edit(editor.uri("other.py"), mine)]}
            ),
            "not a document",
        ),
        (approve(session, request, {"changes": {editor.uri("other.py"): mine}}), "not a document"),
        (
            approve(
                session, request, {"changes": {uri.replace("/prop.py", "/sub/../other.py"): mine}}
            ),
            "not a document",
        ),
        (
            approve(
                session, request, {"changes": {uri.replace("/prop.py", "/sub/../prop.py"): mine}}
            ),
            "not a document",
        ),
        (approve(session, request, {"changes": {editor.uri("link.py"): mine}}), "not a document"),
        (approve(session, request, {"changes": {editor.uri("out.py"): mine}}), "not a document"),
        (
            approve(session, request, {"changes": {(outside / "bashrc").as_uri(): mine}}),
            "not a document",
        ),
        (approve(session, request, {"changes": {"untitled:prop.py": mine}}), "not a document"),
        (
            approve(
                session, request, {"changes": {uri.replace("file://", "file://otherhost"): mine}}
            ),
            "not a document",
        ),
        (
            approve(
                session, request, {"changes": {uri.replace("file://", "vscode-remote://"): mine}}
            ),
            "not a document",
        ),
        # The proposal's document and another one at once: all refused, none half-applied.
        (
            approve(session, request, {"changes": {uri: hunks, editor.uri("other.py"): mine}}),
            "not a document",
        ),
        # The same document twice (two changes, or two spellings of its uri).
        (
            approve(
                session,
                request,
                {
                    "documentChanges": [
                        doc_edit(uri, hunks[:1], version),
                        doc_edit(uri, hunks[1:], version),
                    ]
                },
            ),
            "twice",
        ),
        (
            approve(
                session,
                request,
                {
                    "documentChanges": [doc_edit(uri, hunks[:1], version)],
                    "changes": {uri: hunks[1:]},
                },
            ),
            "twice",
        ),
        (
            approve(
                session,
                request,
                {"changes": {uri: hunks[:1], uri.replace("prop.py", "%70rop.py"): hunks[1:]}},
            ),
            "twice",
        ),
        # Files created, deleted or renamed.
        (
            approve(
                session,
                request,
                {
                    "documentChanges": [
                        {"kind": "create", "uri": uri, "options": {"overwrite": True}}
                    ]
                },
            ),
            "new file",
        ),
        (
            approve(
                session,
                request,
                {"documentChanges": [{"kind": "create", "uri": editor.uri("new.py")}]},
            ),
            "not a document",
        ),
        (
            approve(
                session,
                request,
                {"documentChanges": [{"kind": "delete", "uri": editor.uri("other.py")}]},
            ),
            "delete",
        ),
        (
            approve(
                session,
                request,
                {
                    "documentChanges": [
                        {
                            "kind": "rename",
                            "oldUri": uri,
                            "newUri": (outside / "bashrc").as_uri(),
                            "options": {"overwrite": True},
                        }
                    ]
                },
            ),
            "rename",
        ),
        # Edits that overlap, run backwards or are not positions at all.
        (
            approve(
                session, request, {"changes": {uri: [hunks[0], {**hunks[0], "newText": "x\n"}]}}
            ),
            "overlap",
        ),
        (
            approve(
                session,
                request,
                {
                    "changes": {
                        uri: [
                            {
                                "range": {
                                    "start": {"line": 2, "character": 0},
                                    "end": {"line": 0, "character": 0},
                                },
                                "newText": "",
                            }
                        ]
                    }
                },
            ),
            "ends before",
        ),
        (
            approve(
                session,
                request,
                {
                    "changes": {
                        uri: [
                            {
                                "range": {
                                    "start": {"line": -1, "character": 0},
                                    "end": {"line": 0, "character": 0},
                                },
                                "newText": PAYLOAD,
                            }
                        ]
                    }
                },
            ),
            "not a WorkspaceEdit",
        ),
        (approve(session, request, {"changes": {uri: "all of it"}}), "not a WorkspaceEdit"),
        # With another decision than once.
        (
            approve(
                session, request, {"changes": {uri: hunks}}, decision="always", scope="project"
            ),
            "decision once",
        ),
        (approve(session, request, {"changes": {uri: mine}}, decision="reject"), "decision once"),
        # For another session, or a question that does not exist.
        (
            {**approve(session, request, {"changes": {uri: mine}}), "sessionId": other_session},
            "does not belong",
        ),
        (
            {**approve(session, request, {"changes": {uri: mine}}), "requestId": "perm_nope"},
            "requestId",
        ),
    ]
    before = snapshot(editor.root), snapshot(outside)
    for params, words in attacks:
        with security_figures.attempt(ACCEPT):
            message = await refused(editor, "agent/approve", params, words)
            assert "edit" in message or "requestId" in message, message
            assert (snapshot(editor.root), snapshot(outside)) == before
            assert not editor.session_events(session, "permission-resolved")
    # An edit past the end of the document is clamped to it: still only prop.py changes.
    far = {"line": 10**6, "character": 10**6}
    with security_figures.attempt(ACCEPT):
        edit = {"changes": {uri: [{"range": {"start": far, "end": far}, "newText": "omega = 5\n"}]}}
        await editor.request("agent/approve", approve(session, request, edit))
        await asyncio.wait_for(turn, 20)
        assert (editor.root / "prop.py").read_text() == OLD + "omega = 5\n"
        after_ = snapshot(editor.root)
        after_.pop("prop.py")
        before[0].pop("prop.py")
        assert (after_, snapshot(outside)) == before
    # Answered: a second answer (the same edit again) finds no open question.
    with security_figures.attempt(ACCEPT):
        await refused(
            editor,
            "agent/approve",
            approve(session, request, {"changes": {uri: mine}}),
            "no open question",
        )
        assert (editor.root / "prop.py").read_text() == OLD + "omega = 5\n"


async def test_an_accepted_text_over_the_size_limit_is_not_written(
    panel: Editor, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    """The proposal is small; the accepted version is over the 32 MB a tool may write."""
    editor = panel
    session, request, turn = await propose(editor, api, "big.txt", OLD, NEW)
    [change] = request["edit"]["documentChanges"]
    huge = "x" * (MAX_EDIT_BYTES + 10) + "\n"
    with security_figures.attempt(ACCEPT):
        edit = {"changes": {change["textDocument"]["uri"]: [whole(huge)]}}
        await editor.request("agent/approve", approve(session, request, edit), timeout=60)
        await asyncio.wait_for(turn, 60)
        assert (editor.root / "big.txt").read_text() == OLD
        [result] = [
            e for e in editor.session_events(session, "tool-result") if e["tool"] == "write"
        ]
        assert result["isError"] and "limit" in result["output"]


async def test_an_accept_never_overwrites_what_the_user_typed_meanwhile(
    panel: Editor, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    """The proposal was made at version 1 of an open buffer; the user types next to its last
    hunk (lines both change: a conflict, lsp/rebase.py), then a client accepts the proposal's
    edit in the unversioned `changes` form: refused, the buffer keeps the typing."""
    editor = panel
    (editor.root / "typed.py").write_text(OLD)
    editor.open("typed.py")
    session, request, turn = await propose(editor, api, "typed.py", OLD, NEW)
    [change] = request["edit"]["documentChanges"]
    editor.type_text("typed.py", OLD + "mine = True\n")
    with security_figures.attempt(ACCEPT):
        edit = {"changes": {change["textDocument"]["uri"]: change["edits"][:1]}}
        with pytest.raises(JsonRpcException) as caught:
            await editor.request("agent/approve", approve(session, request, edit))
        assert "cannot be accepted" in caught.value.message, caught.value
        assert editor.buffers[editor.uri("typed.py")].text == OLD + "mine = True\n"
        assert (editor.root / "typed.py").read_text() == OLD
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "reject"},
    )
    await asyncio.wait_for(turn, 20)
    assert editor.buffers[editor.uri("typed.py")].text == OLD + "mine = True\n"
    [result] = [e for e in editor.session_events(session, "tool-result") if e["tool"] == "write"]
    assert result["isError"], result


async def test_an_accepted_text_that_is_not_unicode_is_refused(
    panel: Editor, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    """A lone surrogate (valid JSON, "\\ud800") cannot be written as UTF-8 nor stored."""
    editor = panel
    session, request, turn = await propose(editor, api, "surrogate.py", OLD, NEW)
    [change] = request["edit"]["documentChanges"]
    with security_figures.attempt(ACCEPT):
        edit = {"changes": {change["textDocument"]["uri"]: [whole("bad = '\ud800'\n")]}}
        await refused(editor, "agent/approve", approve(session, request, edit), "edit")
        assert (editor.root / "surrogate.py").read_text() == OLD
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "reject"},
    )
    await asyncio.wait_for(turn, 20)


async def test_a_plan_question_takes_no_edit(
    panel: Editor, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    editor = panel
    api.enqueue(reply(tool_use("exit_plan", {"plan": "1. write p.py"})), reply(text("planned")))
    session = await editor.new_session()
    await editor.request("agent/setMode", {"sessionId": session, "mode": "plan"})
    turn = asyncio.ensure_future(editor.prompt(session, "plan"))
    request = await editor.wait_event(session, "permission-request")
    assert request["tool"] == "exit_plan"
    with security_figures.attempt(ACCEPT):
        edit = {
            "documentChanges": [
                {"kind": "create", "uri": editor.uri("p.py")},
                doc_edit(editor.uri("p.py"), [whole(PAYLOAD)]),
            ]
        }
        await refused(editor, "agent/approve", approve(session, request, edit), "edit")
        assert not (editor.root / "p.py").exists()
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "reject"},
    )
    await asyncio.wait_for(turn, 20)


async def test_a_renames_accepted_text_over_the_size_limit_is_not_written(
    renamer: tuple[Editor, LanguageAnswers],
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    editor, answers = renamer
    where = write_project(editor.root, "big")
    before = snapshot(where)
    rename_answers(editor, answers, "big")
    api.enqueue(
        *(reply(tool_use(name, args)) for name, args in rename_calls("big")), reply(text("done"))
    )
    session = await editor.new_session()
    turn = asyncio.ensure_future(editor.prompt(session, "go"))
    request = await editor.wait_event(session, "permission-request")
    changes = request["edit"]["documentChanges"]
    huge = "x" * (MAX_EDIT_BYTES + 10) + "\n"
    with security_figures.attempt(ACCEPT):
        edit = {"documentChanges": [{**changes[1], "edits": [whole(huge)]}]}
        await editor.request("agent/approve", approve(session, request, edit), timeout=60)
        await asyncio.wait_for(turn, 60)
        assert snapshot(where) == before
        [result] = [
            e for e in editor.session_events(session, "tool-result") if e["tool"] == "rename"
        ]
        assert result["isError"] and "limit" in result["output"]
