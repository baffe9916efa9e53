"""A proposal of several hunks in an ACP client: one session/request_permission per hunk, one
after the other, each showing only its hunk; the kept hunks are applied together as one partial
accept, and the model is told what differs from its proposal (`agentls acp` as a process, a real
ACP client)."""

from __future__ import annotations

import asyncio

from acp.schema import TextContentBlock

from messages_api import reply, text, tool_use
from tests.acp.conftest import TURN_S, AcpEnv, Answer, ScriptedClient, connect

BEFORE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
PROPOSED = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"


async def propose(acp_env: AcpEnv, name: str, answers: list[Answer]) -> ScriptedClient:
    """The model proposes a two-hunk edit of `name` (created as BEFORE); the client answers."""
    (acp_env.root / name).write_text(BEFORE)
    acp_env.api.enqueue(
        reply(tool_use("read", {"path": name})),
        reply(tool_use("edit", {"path": name, "old_string": BEFORE, "new_string": PROPOSED})),
        reply(text("done")),
    )
    client = ScriptedClient(files=None, answers=answers)
    async with connect(acp_env, client, fs=False) as acp:
        sid = (await acp.conn.new_session(cwd=str(acp_env.root), mcp_servers=[])).session_id
        prompt = [TextContentBlock(type="text", text="change a and e")]
        result = await asyncio.wait_for(acp.conn.prompt(session_id=sid, prompt=prompt), TURN_S)
    assert result.stop_reason == "end_turn"
    return client


def last_tool_result(acp_env: AcpEnv) -> dict[str, object]:
    body = acp_env.api.requests[-1].body
    return next(b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result")


async def test_each_hunk_is_asked_alone_and_only_the_kept_one_is_applied(
    acp_env: AcpEnv,
) -> None:
    client = await propose(acp_env, "kept.py", ["drop_hunk", "keep_hunk"])
    assert (acp_env.root / "kept.py").read_text() == "a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n"
    assert len(client.questions) == 2
    (first, first_options), (second, second_options) = client.questions
    # The first offers the whole proposal too; the next ones only their hunk.
    assert first_options[:2] == ["keep_hunk", "allow_once"]
    assert "drop_hunk" in first_options and first_options[-1] == "reject_once"
    assert second_options == ["keep_hunk", "drop_hunk"]
    assert first.tool_call_id == second.tool_call_id
    assert first.title is not None and "hunk 1 of 2 (kept.py, line 1)" in first.title
    assert second.title is not None and "hunk 2 of 2 (kept.py, line 5)" in second.title
    # Each shows its own hunk alone.
    assert first.content is not None and second.content is not None
    assert first.content[0].new_text == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"
    assert second.content[0].new_text == "a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n"
    result = last_tool_result(acp_env)
    assert not result.get("is_error") and "as the user accepted it" in str(result["content"])


async def test_accept_all_on_the_first_question_applies_the_whole_proposal(
    acp_env: AcpEnv,
) -> None:
    client = await propose(acp_env, "whole.py", ["allow_once"])
    assert len(client.questions) == 1
    assert (acp_env.root / "whole.py").read_text() == PROPOSED


async def test_dropping_every_hunk_is_a_rejection_with_the_note(acp_env: AcpEnv) -> None:
    client = await propose(acp_env, "none.py", ["drop_hunk", ("drop_hunk", "leave it as is")])
    assert len(client.questions) == 2
    assert (acp_env.root / "none.py").read_text() == BEFORE
    result = last_tool_result(acp_env)
    assert result.get("is_error") and "leave it as is" in str(result["content"])


async def test_a_cancelled_hunk_question_rejects_the_proposal(acp_env: AcpEnv) -> None:
    # "keep" the first, then no answer left: the client answers "cancelled".
    client = await propose(acp_env, "cancelled.py", ["keep_hunk"])
    assert len(client.questions) == 2
    assert (acp_env.root / "cancelled.py").read_text() == BEFORE
