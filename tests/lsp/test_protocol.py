"""`agentls serve` over stdio with a client that declares what our VS Code extension declares."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from messages_api import MessagesAPIServer, reply, text, thinking, tool_use
from tests.lsp.editor import Editor, diag
from tests.waiting import until

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALLOW = {"permissions": {"*": "allow"}}


def no_rejections(api: MessagesAPIServer) -> None:
    rejected = [r for r in api.all_requests if r.rejected]
    assert not rejected, rejected[0].error


async def expect_invalid(editor: Editor, method: str, params: Any, *words: str) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await editor.request(method, params)
    assert caught.value.code == -32602, caught.value
    for word in words:
        assert word in caught.value.message, caught.value.message
    return caught.value.message


async def test_initialize_advertises_the_agent(vscode_like: Editor) -> None:
    caps = vscode_like.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.experimental == {"agent": {"protocolVersion": 1}}
    assert set(caps.execute_command_provider.commands) >= {"agent.approve", "agent.runOnSelection"}
    assert caps.code_action_provider


async def test_prompt_streams_events_then_answers(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    answer = "The quick brown fox jumps over the lazy dog. " * 20
    module_api.enqueue(reply(text(answer), chunk_size=3))
    session = await editor.new_session("first")
    result = await editor.prompt(session, "tell me")
    assert result["finishReason"] == "end_turn"
    assert result["text"] == answer
    assert result["sessionId"] == session and result["messageId"]
    assert set(result["usage"]) == {
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
        "costUsd",
    }
    events = editor.session_events(session)
    # Every event of the turn, turn-end included, arrived before the answer.
    assert events[0]["type"] == "turn-start" and events[-1]["type"] == "turn-end"
    deltas = [e for e in events if e["type"] == "text-delta"]
    assert "".join(e["delta"] for e in deltas) == answer
    # Coalesced: far fewer notifications than the model's ~300 deltas.
    assert len(deltas) < 100
    assert any(e["type"] == "usage" for e in events)


async def test_streamed_thinking_and_text_arrive_complete_and_in_order(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    """Deltas are batched once (by the turn): each notification is a run of one kind, and joined
    they are the model's thinking and text, in the order they streamed, none lost."""
    editor = vscode_like
    thought = "Let me weigh the options one by one. " * 15
    answer = "First, the fox; then, the dog. " * 15
    module_api.enqueue(reply(thinking(thought), text(answer), chunk_size=2))
    session = await editor.new_session("stream order")
    result = await editor.prompt(session, "think, then answer")
    assert result["text"] == answer
    streamed = [
        e for e in editor.session_events(session) if e["type"] in ("thinking-delta", "text-delta")
    ]
    kinds = [e["type"] for e in streamed]
    assert kinds == sorted(kinds, key=lambda k: k != "thinking-delta")  # all thinking first
    assert "".join(e["delta"] for e in streamed if e["type"] == "thinking-delta") == thought
    assert "".join(e["delta"] for e in streamed if e["type"] == "text-delta") == answer
    assert {e.get("messageId") for e in streamed} == {result["messageId"]}


async def test_bad_params_answer_invalid_params_naming_the_field(vscode_like: Editor) -> None:
    editor = vscode_like
    await expect_invalid(editor, "agent/prompt", {"text": "hi"}, "sessionId")
    await expect_invalid(editor, "agent/prompt", {"sessionId": 5, "text": "hi"}, "sessionId")
    await expect_invalid(
        editor, "agent/prompt", {"sessionId": "ses_nope", "text": "hi"}, "unknown session"
    )
    await expect_invalid(
        editor, "agent/prompt", {"sessionId": "x", "text": "hi", "txet": 1}, "txet"
    )
    await expect_invalid(editor, "agent/prompt", [1, 2], "expected an object")
    session = await editor.new_session()
    await expect_invalid(
        editor,
        "agent/approve",
        {"sessionId": session, "requestId": "perm_x", "decision": "maybe"},
        "decision",
    )
    await expect_invalid(
        editor,
        "agent/approve",
        {"sessionId": session, "requestId": "perm_x", "decision": "once"},
        "unknown requestId",
    )
    await expect_invalid(editor, "agent/getMessages", {}, "sessionId")
    await expect_invalid(
        editor, "agent/revert", {"sessionId": session, "messageId": "msg_x"}, "messageId"
    )
    await expect_invalid(editor, "agent/cancel", {"sessionId": "ses_nope"}, "unknown session")
    # The server is still serving.
    assert (await editor.request("agent/listSessions", {}))["sessions"]


async def test_list_sessions_and_get_messages(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    (editor.root / "seen.txt").write_text("seen\n")
    module_api.enqueue(
        reply(text("Looking."), tool_use("read", {"path": "seen.txt"})),
        reply(text("It says seen.")),
    )
    session = await editor.new_session("listing")
    await editor.prompt(session, "what does seen.txt say?")
    listed = (await editor.request("agent/listSessions", {}))["sessions"]
    mine = [s for s in listed if s["sessionId"] == session][0]
    assert mine["title"] == "listing" and mine["busy"] is False
    assert mine["usage"]["outputTokens"] > 0 and "createdAt" in mine and "updatedAt" in mine
    messages = (await editor.request("agent/getMessages", {"sessionId": session}))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant"]
    tool = [p for p in messages[1]["parts"] if p["type"] == "tool"][0]
    assert tool["tool"] == "read" and tool["status"] == "completed" and "seen" in tool["output"]
    assert tool["callId"] and tool["input"] == {"path": "seen.txt"}
    assert messages[2]["parts"] == [{"type": "text", "text": "It says seen."}]


async def test_read_sees_unsaved_buffer_and_edit_lands_in_buffer_and_disk(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    (editor.root / "clean.py").write_text("x = 1\n")
    editor.open("clean.py")
    module_api.enqueue(
        reply(tool_use("read", {"path": "clean.py"})),
        reply(tool_use("edit", {"path": "clean.py", "old_string": "x = 1", "new_string": "x = 2"})),
        reply(tool_use("bash", {"command": "cat clean.py"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    result = await editor.prompt(session, "set x to 2", **{})
    assert result["finishReason"] == "end_turn"
    uri = editor.uri("clean.py")
    assert editor.buffers[uri].text == "x = 2\n"
    assert (editor.root / "clean.py").read_text() == "x = 2\n"  # the client saved it (savesEdits)
    edit = editor.applied_edits[-1]
    change = edit["documentChanges"][0]
    assert change["textDocument"]["uri"] == uri and change["textDocument"]["version"] == 1
    assert change["edits"][0]["newText"] == "2"  # a minimal edit, not the whole file
    bash_result = module_api.requests[-1].body["messages"][-1]["content"][0]["content"]
    assert "x = 2" in bash_result
    no_rejections(module_api)


async def test_unsaved_user_changes_are_never_written_to_disk(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    (editor.root / "dirty.py").write_text("a = 1\nb = 1\n")
    editor.open("dirty.py")
    editor.type_text("dirty.py", "a = 1\nb = 1\nc = 'typed, not saved'\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "dirty.py"})),
        reply(
            tool_use("edit", {"path": "dirty.py", "old_string": "a = 1", "new_string": "a = 100"})
        ),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "change a", **{})
    bodies = [r.body for r in module_api.requests[-3:]]
    read_output = bodies[1]["messages"][-1]["content"][0]["content"]
    assert "typed, not saved" in read_output  # read sees the buffer
    edit_output = bodies[2]["messages"][-1]["content"][0]["content"]
    assert "unsaved changes" in edit_output and "saved version" in edit_output
    assert editor.buffers[editor.uri("dirty.py")].text == "a = 100\nb = 1\nc = 'typed, not saved'\n"
    assert (editor.root / "dirty.py").read_text() == "a = 1\nb = 1\n"


async def test_new_file_is_created_through_the_editor(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    module_api.enqueue(
        reply(tool_use("write", {"path": "pkg/new_mod.py", "content": "VALUE = 3\n"})),
        reply(text("ok")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "create it")
    assert (editor.root / "pkg" / "new_mod.py").read_text() == "VALUE = 3\n"
    kinds = [c.get("kind", "edit") for c in editor.applied_edits[-1]["documentChanges"]]
    assert kinds == ["create", "edit"]


async def test_refused_edit_reaches_the_model(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    (editor.root / "refuse.py").write_text("r = 1\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "refuse.py"})),
        reply(
            tool_use("edit", {"path": "refuse.py", "old_string": "r = 1", "new_string": "r = 2"})
        ),
        reply(text("ok")),
    )
    editor.refuse_edits_with = "the file is read-only in this editor"
    try:
        session = await editor.new_session()
        await editor.prompt(session, "edit")
    finally:
        editor.refuse_edits_with = None
    result = module_api.requests[-1].body["messages"][-1]["content"][0]
    assert result["is_error"] and "read-only in this editor" in result["content"]
    assert (editor.root / "refuse.py").read_text() == "r = 1\n"


async def test_pushed_diagnostics_verify_the_edit(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    (editor.root / "verify.py").write_text("def f():\n    return 1\n")
    uri = editor.uri("verify.py")
    editor.open("verify.py")
    editor.push_diagnostics(uri, [diag(0, "old warning that stays", severity=2)], 1)
    editor.diagnostics_after_edit["verify.py"] = [
        diag(0, "old warning that stays", severity=2),
        diag(1, '"undefined_name" is not defined'),
        diag(1, "just a hint", severity=4),
    ]
    module_api.enqueue(
        reply(tool_use("read", {"path": "verify.py"})),
        reply(
            tool_use(
                "edit",
                {
                    "path": "verify.py",
                    "old_string": "return 1",
                    "new_string": "return undefined_name",
                },
            )
        ),
        reply(text("ok")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "break it")
    output = module_api.requests[-1].body["messages"][-1]["content"][0]["content"]
    assert '"undefined_name" is not defined' in output and "line 2: error [pyright]" in output
    assert "old warning that stays" not in output and "just a hint" not in output


async def test_ask_shows_diff_and_edit_and_waits_for_approve(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    (editor.root / "ask.py").write_text("value = 'old'\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "ask.py"})),
        reply(tool_use("edit", {"path": "ask.py", "old_string": "'old'", "new_string": "'new'"})),
        reply(text("applied")),
    )
    session = await editor.new_session()
    editor.auto_approve = False
    try:
        turn = asyncio.ensure_future(editor.prompt(session, "change it"))
        request = await editor.wait_event(session, "permission-request")
    finally:
        editor.auto_approve = True
    assert request["tool"] == "edit" and "-value = 'old'" in request["diff"]
    assert request["edit"]["documentChanges"][0]["edits"][0]["newText"] == "value = 'new'\n"
    assert (editor.root / "ask.py").read_text() == "value = 'old'\n"
    await editor.request(
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "once"},
    )
    result = await turn
    assert result["text"] == "applied"
    assert (editor.root / "ask.py").read_text() == "value = 'new'\n"
    resolved = editor.session_events(session, "permission-resolved")
    assert resolved[0]["decision"] == "once"
    await expect_invalid(
        editor,
        "agent/approve",
        {"sessionId": session, "requestId": request["requestId"], "decision": "once"},
        "already",
    )


async def test_cancel_request_answers_request_cancelled(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    module_api.enqueue(reply(text("slow " * 400), chunk_size=5, delay_s=0.01), reply(text("after")))
    session = await editor.new_session()
    msg_id, future = editor.start_request("agent/prompt", {"sessionId": session, "text": "long"})
    await editor.wait_event(session, "text-delta")
    editor.cancel_request(msg_id)
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(future, 10)
    assert caught.value.code == -32800
    ends = await editor.wait_event(session, "turn-end")
    assert ends["finishReason"] == "cancelled"
    again = await editor.prompt(session, "next")
    assert again["text"] == "after"
    no_rejections(module_api)


async def test_agent_cancel_cancels_running_and_queued(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    module_api.enqueue(reply(text("slow " * 400), chunk_size=5, delay_s=0.01))
    session = await editor.new_session()
    first = asyncio.ensure_future(editor.prompt(session, "one"))
    await editor.wait_event(session, "text-delta")
    second = asyncio.ensure_future(editor.prompt(session, "two"))
    await asyncio.sleep(0.1)
    listed = (await editor.request("agent/listSessions", {}))["sessions"]
    assert [s for s in listed if s["sessionId"] == session][0]["busy"] is True
    assert (await editor.request("agent/cancel", {"sessionId": session}))["cancelled"] is True
    r1, r2 = await asyncio.gather(first, second)
    assert r1["finishReason"] == "cancelled" and r2["finishReason"] == "cancelled"
    messages = (await editor.request("agent/getMessages", {"sessionId": session}))["messages"]
    assert messages[-1]["parts"][0]["cancelled"] is True  # streamed text kept, marked


async def test_two_sessions_at_once_do_not_mix(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like

    def by_prompt(body: dict[str, Any]) -> Any:
        prompt = body["messages"][-1]["content"][-1]["text"]
        return reply(
            text(
                f"answer for {prompt} " * 30,
            ),
            chunk_size=4,
            delay_s=0.002,
        )

    saved_default = module_api.default
    module_api.default = by_prompt
    try:
        a, b = await editor.new_session(), await editor.new_session()
        ra, rb = await asyncio.gather(editor.prompt(a, "alpha"), editor.prompt(b, "beta"))
    finally:
        module_api.default = saved_default
    assert ra["text"] == "answer for alpha " * 30 and rb["text"] == "answer for beta " * 30
    assert "".join(e["delta"] for e in editor.session_events(a, "text-delta")) == ra["text"]
    assert "".join(e["delta"] for e in editor.session_events(b, "text-delta")) == rb["text"]


async def test_revert_undoes_file_changes_through_the_editor(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    (editor.root / "rev.py").write_text("n = 1\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "rev.py"})),
        reply(tool_use("edit", {"path": "rev.py", "old_string": "n = 1", "new_string": "n = 2"})),
        reply(tool_use("write", {"path": "rev_new.py", "content": "created = True\n"})),
        reply(tool_use("bash", {"command": "true"})),
        reply(text("done")),
    )
    session = await editor.new_session()
    await editor.prompt(session, "change things")
    assert (editor.root / "rev.py").read_text() == "n = 2\n"
    messages = (await editor.request("agent/getMessages", {"sessionId": session}))["messages"]
    result = await editor.request(
        "agent/revert", {"sessionId": session, "messageId": messages[0]["id"]}
    )
    assert sorted(result["files"]) == sorted([editor.uri("rev.py"), editor.uri("rev_new.py")])
    assert result["bashNotUndone"] is True
    assert (editor.root / "rev.py").read_text() == "n = 1\n"
    assert not (editor.root / "rev_new.py").exists()
    messages = (await editor.request("agent/getMessages", {"sessionId": session}))["messages"]
    assert all(m.get("reverted") for m in messages)
    module_api.enqueue(reply(text("fresh")))
    await editor.prompt(session, "start over")
    sent = module_api.requests[-1].body["messages"]
    assert len(sent) == 1 and "start over" in json.dumps(sent)


async def test_code_actions_and_run_on_selection(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    from lsprotocol import types

    editor = vscode_like
    (editor.root / "sel.py").write_text("def add(a, b):\n    return a - b\n")
    editor.open("sel.py")
    rng = types.Range(
        start=types.Position(line=1, character=0), end=types.Position(line=1, character=16)
    )
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri("sel.py")),
            range=rng,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    titles = [a.title for a in actions]
    assert titles == [
        "Ask agent about this",
        "Agent: fix the problems here",
        "Agent: refactor this",
        "Agent: plan a change here",
    ]
    command = actions[1].command
    assert command.command == "agent.runOnSelection"
    module_api.enqueue(reply(text("It subtracts instead of adding.")))
    session = await editor.new_session("selection")
    args = dict(command.arguments[0])
    args["sessionId"] = session
    started = await editor.client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="agent.runOnSelection", arguments=[args])
    )
    assert started["sessionId"] == session
    end = await editor.wait_event(session, "turn-end")
    assert end["finishReason"] == "end_turn"
    sent = json.dumps(module_api.requests[-1].body["messages"][0])
    assert "return a - b" in sent and "def add" not in sent  # only the selection is attached


async def test_progress_reports_a_running_turn(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    editor = vscode_like
    (editor.root / "prog.txt").write_text("p\n")
    module_api.enqueue(reply(tool_use("read", {"path": "prog.txt"})), reply(text("ok")))
    session = await editor.new_session()
    before = set(editor.client.progress_reports)
    await editor.prompt(session, "progress please")

    def ended() -> list[Any]:
        new = [t for t in editor.client.progress_reports if t not in before]
        reports = editor.client.progress_reports[new[-1]] if new else []
        return reports if reports and reports[-1].kind == "end" else []

    await until(ended, "the turn's progress ended")
    reports = ended()
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert reports[0].title == "progress please"
    assert any("read" in (getattr(r, "message", "") or "") for r in reports)


async def test_an_editor_that_never_answers_apply_edit_gets_a_bounded_wait(
    vscode_like: Editor, module_api: MessagesAPIServer
) -> None:
    from lsprotocol import types

    editor = vscode_like
    (editor.root / "hang.py").write_text("h = 1\n")
    module_api.enqueue(
        reply(tool_use("read", {"path": "hang.py"})),
        reply(tool_use("edit", {"path": "hang.py", "old_string": "h = 1", "new_string": "h = 2"})),
        reply(text("gave up")),
    )
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"agent": {"applyEditTimeoutS": 0.5}})
    )
    editor.never_answer_edits = True
    try:
        session = await editor.new_session()
        result = await editor.prompt(session, "edit")
    finally:
        editor.never_answer_edits = False
        editor.released.set()
        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"agent": {"applyEditTimeoutS": 30}})
        )
    assert result["text"] == "gave up"
    tool_result = module_api.requests[-1].body["messages"][-1]["content"][0]
    assert (
        tool_result["is_error"] and "did not answer workspace/applyEdit" in tool_result["content"]
    )
