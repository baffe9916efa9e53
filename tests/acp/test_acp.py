"""`agentls acp` with a client that holds the editor's buffers (fs capabilities): one server
process for the module, a scripted client, the local Messages API."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from acp import RequestError
from acp.schema import EmbeddedResourceContentBlock, TextContentBlock, TextResourceContents

from messages_api import error, reply, text, thinking, tool_use
from tests.acp.conftest import TURN_S, AcpEnv, Connection, ScriptedClient, connect, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

BUGGY = "def add(a, b):\n    return a - b\n"
# The editor's buffer: the file with an unsaved line on top.
BUFFER = "# unsaved note\n" + BUGGY


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def acp(acp_env: AcpEnv) -> AsyncIterator[Connection]:
    async with connect(acp_env, ScriptedClient(files={})) as connection:
        yield connection


@pytest.fixture
def client(acp: Connection) -> ScriptedClient:
    """The module's client, emptied for this test."""
    c = acp.client
    c.answers.clear()
    c.updates.clear()
    c.questions.clear()
    c.reads.clear()
    c.writes.clear()
    c.cancelled.clear()
    assert c.files is not None
    c.files.clear()
    return c


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


async def prompt(acp: Connection, session_id: str, words: str) -> Any:
    return await asyncio.wait_for(
        acp.conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=words)]),
        TURN_S,
    )


async def test_initialize_advertises_what_works(acp: Connection) -> None:
    caps = acp.init.agent_capabilities
    assert acp.init.protocol_version == 1
    assert caps.load_session is True
    assert caps.prompt_capabilities.embedded_context is True
    assert caps.prompt_capabilities.image is True
    assert caps.session_capabilities.list is not None
    assert acp.init.agent_info.name == "agentls"


async def test_fix_through_the_editors_buffers(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    path = acp.root / "calc.py"
    path.write_text(BUGGY)
    assert client.files is not None
    client.files[str(path)] = BUFFER
    client.answers.append("allow_once")
    acp_env.api.enqueue(
        reply(text("Reading."), tool_use("read", {"path": "calc.py"})),
        reply(tool_use("edit", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"})),
        reply(text("Fixed: add adds now.")),
    )
    session = await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])
    sid = session.session_id
    result = await prompt(acp, sid, "fix add")

    assert result.stop_reason == "end_turn"
    # The read saw the unsaved buffer, the edit went to the editor, and disk was left to it.
    read_result = tool_results(acp_env.api.requests[-2].body)[-1]
    assert "# unsaved note" in str(read_result["content"])
    assert client.files[str(path)] == BUFFER.replace("a - b", "a + b")
    assert client.writes == [(str(path), BUFFER.replace("a - b", "a + b"))]
    assert path.read_text() == BUGGY
    # The question: the call, its whole-file diff, the options (always named by what it allows).
    ((call, options),) = client.questions
    assert call.kind == "edit" and call.content is not None
    diff = call.content[0]
    assert diff.type == "diff" and diff.path == str(path)
    assert diff.old_text == BUFFER and diff.new_text == BUFFER.replace("a - b", "a + b")
    assert options[0] == "allow_once" and options[-1] == "reject_once"
    assert "allow_always" in options
    # The updates: text, each call with its kind and location, its result, usage.
    assert client.text(sid) == "Reading.Fixed: add adds now."
    starts = client.of("tool_call", sid)
    assert [(s.kind, s.status) for s in starts] == [("read", "pending"), ("edit", "pending")]
    assert starts[0].locations[0].path == str(path)
    edit_diff = starts[1].content[0]
    assert (edit_diff.old_text, edit_diff.new_text) == ("a - b", "a + b")
    finals = [u for u in client.of("tool_call_update", sid) if u.status in ("completed", "failed")]
    assert [u.status for u in finals] == ["completed", "completed"]
    assert any(u.status == "in_progress" for u in client.of("tool_call_update", sid))
    usage = client.of("usage_update", sid)
    assert usage and usage[-1].size == 1_000_000 and usage[-1].used > 0
    assert result.usage is not None and result.usage.output_tokens > 0
    # The session is listed.
    listed = await acp.conn.list_sessions(cwd=str(acp.root))
    assert any(s.session_id == sid and s.title == "fix add" for s in listed.sessions)


async def test_rejected_edit_with_feedback(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    path = acp.root / "reject.py"
    path.write_text("X = 1\n")
    assert client.files is not None
    client.files[str(path)] = "X = 1\n"
    client.answers.append(("reject_once", "use X = 3 instead"))
    acp_env.api.enqueue(
        reply(tool_use("read", {"path": "reject.py"})),
        reply(
            tool_use("edit", {"path": "reject.py", "old_string": "X = 1", "new_string": "X = 2"})
        ),
        reply(text("Understood.")),
    )
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    result = await prompt(acp, sid, "set X to 2")

    assert result.stop_reason == "end_turn"
    assert client.files[str(path)] == "X = 1\n" and client.writes == []
    rejected = tool_results(acp_env.api.requests[-1].body)[-1]
    assert rejected.get("is_error") is True
    assert "use X = 3 instead" in str(rejected["content"])
    finals = [u for u in client.of("tool_call_update", sid) if u.status in ("completed", "failed")]
    assert [u.status for u in finals] == ["completed", "failed"]


async def test_bash_shows_its_command_and_output(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    client.answers.append("allow_once")
    command = "echo first; sleep 1; echo second"
    acp_env.api.enqueue(reply(tool_use("bash", {"command": command})), reply(text("ran")))
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    assert (await prompt(acp, sid, "run it")).stop_reason == "end_turn"

    (start,) = client.of("tool_call", sid)
    assert start.kind == "execute" and command in start.content[0].content.text
    (question, _options) = client.questions[0]
    assert question.kind == "execute" and command in question.content[0].content.text
    # Where it runs is said (this test environment may or may not have bubblewrap).
    assert question.content[-1].content.text.split(":")[0] in ("Sandboxed", "Not sandboxed")
    updates = client.of("tool_call_update", sid)
    # While it runs: the command, and its latest line (second comes a second after first).
    running = [u for u in updates if u.status == "in_progress" and u.content]
    assert running and running[0].content[-1].content.text in ("first", "second")
    final = updates[-1]
    assert final.status == "completed"
    assert "first\nsecond" in final.content[-1].content.text


async def test_plan_mode_todos_and_the_plan_question(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    path = acp.root / "plan.py"
    path.write_text("P = 1\n")
    assert client.files is not None
    client.files[str(path)] = "P = 1\n"
    client.answers.append("allow_once")  # the plan: start building
    todos = [
        {"content": "read plan.py", "status": "completed"},
        {"content": "set P to 2", "status": "pending", "priority": "high"},
    ]
    acp_env.api.enqueue(
        reply(
            tool_use("read", {"path": "plan.py"}),
            tool_use("todowrite", {"todos": todos}),
            tool_use("edit", {"path": "plan.py", "old_string": "P = 1", "new_string": "P = 2"}),
        ),
        reply(tool_use("exit_plan", {"plan": "1. Set P to 2 in plan.py."})),
        reply(text("Building now.")),
    )
    session = await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])
    sid = session.session_id
    assert session.modes.current_mode_id == "build"
    assert [m.id for m in session.modes.available_modes] == ["build", "plan"]
    await acp.conn.set_session_mode(session_id=sid, mode_id="plan")
    result = await prompt(acp, sid, "plan setting P to 2")

    assert result.stop_reason == "end_turn"
    # In plan mode the edit was refused before any question; the plan was the one question.
    assert client.files[str(path)] == "P = 1\n" and client.writes == []
    ((question, options),) = client.questions
    assert question.kind == "switch_mode" and "Set P to 2" in question.content[0].content.text
    assert options == ["allow_once", "reject_once"]
    finals = [u.status for u in client.of("tool_call_update", sid) if u.status != "in_progress"]
    assert finals == ["completed", "completed", "failed", "completed"]
    modes = [u.current_mode_id for u in client.of("current_mode_update", sid)]
    assert modes == ["plan", "build"]
    (plan,) = client.of("plan", sid)
    entries = [(e.content, e.status, e.priority) for e in plan.entries]
    assert entries == [
        ("read plan.py", "completed", "medium"),
        ("set P to 2", "pending", "high"),
    ]
    # A load says the mode and replays the list.
    client.updates.clear()
    loaded = await acp.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
    assert loaded.modes.current_mode_id == "build"
    assert [len(p.entries) for p in client.of("plan", sid)] == [2]
    with pytest.raises(RequestError) as bad_mode:
        await acp.conn.set_session_mode(session_id=sid, mode_id="yolo")
    assert str(bad_mode.value).startswith("Invalid params: modeId:")


async def test_cancel_mid_stream(acp: Connection, client: ScriptedClient, acp_env: AcpEnv) -> None:
    hold = threading.Event()
    acp_env.api.enqueue(
        reply(text("a long answer that is cut"), chunk_size=4, hold=hold, hold_after=6)
    )
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    running = asyncio.ensure_future(prompt(acp, sid, "talk"))
    try:
        await wait_until(lambda: bool(client.of("agent_message_chunk", sid)))
        await acp.conn.cancel(session_id=sid)
        result = await asyncio.wait_for(running, TURN_S)
    finally:
        hold.set()
    assert result.stop_reason == "cancelled"
    # The session goes on.
    acp_env.api.enqueue(reply(text("still here")))
    assert (await prompt(acp, sid, "again")).stop_reason == "end_turn"
    assert client.text(sid).endswith("still here")


async def test_cancel_while_a_question_waits(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    path = acp.root / "wait.py"
    path.write_text("W = 1\n")
    assert client.files is not None
    client.files[str(path)] = "W = 1\n"
    client.answers.append("wait")
    acp_env.api.enqueue(
        reply(tool_use("read", {"path": "wait.py"})),
        reply(tool_use("edit", {"path": "wait.py", "old_string": "W = 1", "new_string": "W = 2"})),
    )
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    running = asyncio.ensure_future(prompt(acp, sid, "set W"))
    await wait_until(lambda: bool(client.questions))
    await acp.conn.cancel(session_id=sid)
    client.cancelled.set()
    result = await asyncio.wait_for(running, TURN_S)
    assert result.stop_reason == "cancelled"
    assert client.files[str(path)] == "W = 1\n" and client.writes == []
    finals = [u.status for u in client.of("tool_call_update", sid) if u.status != "in_progress"]
    assert finals == ["completed", "failed"]


async def test_embedded_context_reaches_the_model(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    acp_env.api.enqueue(reply(thinking("Pondering the selection."), text("seen")))
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    selection = TextResourceContents(uri="file:///x/sel.py", text="SELECTED = 42")
    result = await acp.conn.prompt(
        session_id=sid,
        prompt=[
            TextContentBlock(type="text", text="explain"),
            EmbeddedResourceContentBlock(type="resource", resource=selection),
        ],
    )
    assert result.stop_reason == "end_turn"
    sent = str(acp_env.api.requests[-1].body["messages"][-1]["content"])
    assert "SELECTED = 42" in sent and "file:///x/sel.py" in sent
    thoughts = client.of("agent_thought_chunk", sid)
    assert "".join(t.content.text for t in thoughts) == "Pondering the selection."
    assert client.text(sid) == "seen"


async def test_stop_reasons_and_a_failed_turn(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    acp_env.api.enqueue(reply(text("cut sh"), stop_reason="max_tokens"))
    assert (await prompt(acp, sid, "long")).stop_reason == "max_tokens"
    acp_env.api.enqueue(reply(text("I can't help with that."), stop_reason="refusal"))
    assert (await prompt(acp, sid, "something bad")).stop_reason == "refusal"
    # A turn that fails (the API refuses the request) is a JSON-RPC error with its reason.
    acp_env.api.enqueue(error(400, "invalid_request_error", "the request was refused"))
    with pytest.raises(RequestError) as failed:
        await prompt(acp, sid, "again")
    # Its message is the sentence and the next step; the data has the kind and the details.
    assert failed.value.code == -32603
    assert str(failed.value).startswith("The API refused the request (HTTP 400). Retry will not")
    assert failed.value.data["kind"] == "bad_request" and not failed.value.data["retryable"]
    assert "the request was refused" in failed.value.data["details"]
    acp_env.api.enqueue(reply(text("back")))
    assert (await prompt(acp, sid, "once more")).stop_reason == "end_turn"


async def test_bad_input_gets_errors_never_a_crash(acp: Connection, client: ScriptedClient) -> None:
    with pytest.raises(RequestError) as unknown:
        await prompt(acp, "ses_nope", "hi")
    assert unknown.value.code == -32602 and "sessionId" in str(unknown.value.data)
    assert str(unknown.value).startswith("Invalid params: sessionId: unknown session")

    with pytest.raises(RequestError) as malformed:
        await acp.request("session/prompt", {"sessionId": "x"})
    assert malformed.value.code == -32602 and "prompt" in str(malformed.value.data)
    assert str(malformed.value) == "Invalid params: prompt: Field required"

    with pytest.raises(RequestError) as no_params:
        await acp.request("session/new", None)
    assert no_params.value.code == -32602

    with pytest.raises(RequestError) as relative:
        await acp.conn.new_session(cwd="relative/dir", mcp_servers=[])
    assert relative.value.code == -32602 and "cwd" in str(relative.value.data)

    with pytest.raises(RequestError) as missing:
        await acp.conn.load_session(cwd=str(acp.root), session_id="ses_missing", mcp_servers=[])
    assert missing.value.code == -32602 and "sessionId" in str(missing.value.data)

    with pytest.raises(RequestError) as image:
        sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
        await acp.request(
            "session/prompt",
            {
                "sessionId": sid,
                "prompt": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
            },
        )
    assert image.value.code == -32602 and "prompt[0]" in str(image.value.data)

    with pytest.raises(RequestError) as unknown_method:
        await acp.request("session/fork", {"sessionId": "x", "cwd": str(acp.root)})
    assert unknown_method.value.code == -32601

    # Still serving.
    assert (await acp.conn.list_sessions(cwd=str(acp.root))).sessions is not None


async def test_load_replays_a_stored_session(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    path = acp.root / "load.py"
    path.write_text("Y = 1\n")
    assert client.files is not None
    client.files[str(path)] = "Y = 1\n"
    acp_env.api.enqueue(
        reply(text("Looking."), tool_use("read", {"path": "load.py"})),
        reply(text("Y is 1.")),
    )
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    await prompt(acp, sid, "what is Y")

    # Another process (another editor window) loads it from the store.
    other = ScriptedClient(files={})
    async with connect(acp_env, other) as second:
        await second.conn.load_session(cwd=str(acp.root), session_id=sid, mcp_servers=[])
        kinds = [u.session_update for _, u in other.updates]
        assert kinds[0] == "user_message_chunk"
        assert other.of("user_message_chunk")[0].content.text == "what is Y"
        assert other.text(sid) == "Looking.Y is 1."
        (call,) = other.of("tool_call")
        assert call.kind == "read" and call.status == "completed"
        assert call.locations[0].path == str(path)
        assert "Y = 1" in call.content[-1].content.text
        # And goes on with it: the history reaches the model.
        acp_env.api.enqueue(reply(text("Still 1.")))
        result = await prompt(second, sid, "and now?")
        assert result.stop_reason == "end_turn"
        sent = acp_env.api.requests[-1].body["messages"]
        assert sent[0]["content"][-1]["text"] == "what is Y" and len(sent) == 5


async def test_commands_are_offered_and_run(
    acp: Connection, client: ScriptedClient, acp_env: AcpEnv
) -> None:
    sid = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[])).session_id
    await wait_until(lambda: bool(client.of("available_commands_update", sid)))
    [offered] = client.of("available_commands_update", sid)
    assert [c.name for c in offered.available_commands] == ["clear", "compact", "model"]
    answer = await prompt(acp, sid, "/model claude-haiku-4-5")
    assert answer.stop_reason == "end_turn"
    assert client.text(sid) == "The model is now claude-haiku-4-5."
    with pytest.raises(RequestError) as unknown:
        await prompt(acp, sid, "/nope")
    assert unknown.value.code == -32602 and "unknown command /nope" in str(unknown.value.data)
