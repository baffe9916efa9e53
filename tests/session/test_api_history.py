"""The API form of the history kept between steps (history.ApiHistory): each step converts only
what changed, and what it sends is always what a fresh conversion of the history would give."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from agentls.history import (
    ApiHistory,
    ContextPart,
    Message,
    Part,
    SummaryPart,
    TextPart,
    ThinkingPart,
    ToolPart,
    new_id,
    now_ms,
    to_api_messages,
)
from agentls.model.caching import with_cache_breakpoints
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


def message(role: str, *parts: Part, reverted: bool = False) -> Message:
    return Message(
        id=new_id("msg"),
        session_id="ses_test",
        role=role,  # type: ignore[arg-type]
        created_at=now_ms(),
        parts=list(parts),
        reverted=reverted,
    )


def random_message(rng: random.Random, n: int) -> Message:
    """A user or an assistant message, of the shapes the conversion treats differently: empty
    ones, blank text, thinking with and without signature, tool calls finished or not."""
    if rng.random() < 0.4:
        kinds = rng.choice([["text"], ["context", "text"], ["blank"], [], ["summary"]])
        parts: list[Part] = []
        for kind in kinds:
            if kind == "text":
                parts.append(TextPart(text=f"prompt {n}"))
            elif kind == "blank":
                parts.append(TextPart(text="  "))
            elif kind == "context":
                parts.append(ContextPart(uri=f"file:///w/{n}.py", text=f"x = {n}"))
            else:
                parts.append(SummaryPart(text=f"summary {n}"))
        return message("user", *parts)
    parts = []
    for k in range(rng.randint(0, 3)):
        kind = rng.choice(["text", "blank", "thinking", "cut-thinking", "tool", "tool"])
        if kind == "text":
            parts.append(TextPart(text=f"answer {n}.{k}"))
        elif kind == "blank":
            parts.append(TextPart(text=""))
        elif kind == "thinking":
            parts.append(ThinkingPart(text=f"hmm {n}", signature="sig"))
        elif kind == "cut-thinking":
            parts.append(ThinkingPart(text=f"cut {n}"))
        else:
            status = rng.choice(["completed", "completed", "error", "pending", "running"])
            parts.append(
                ToolPart(
                    call_id=f"toolu_{n}_{k}",
                    tool="read",
                    input={"path": f"{n}.py"},
                    status=status,
                    output=rng.choice([None, "", f"out {n}"]),
                )
            )
    return message("assistant", *parts)


def test_every_call_equals_a_fresh_conversion_and_never_changes_what_it_returned() -> None:
    rng = random.Random(20261122)
    for _ in range(40):
        api = ApiHistory()
        history: list[Message] = []
        returned: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
        for n in range(60):
            op = rng.random()
            if op < 0.55 or not history:
                history.append(random_message(rng, n))
            elif op < 0.7:
                target = rng.choice(history)
                target.reverted = not target.reverted
            elif op < 0.78:
                # Tool results arrive (run_tools): only on a message no step converted settled.
                for m in history:
                    for part in m.tool_parts():
                        if not part.finished:
                            part.status = "completed"
                            part.output = f"result of {part.call_id}"
            elif op < 0.84:
                # Compaction: a new list, a summary then the newest messages.
                keep = rng.randint(1, len(history))
                history = [message("user", SummaryPart(text=f"sum {n}")), *history[-keep:]]
            elif op < 0.9:
                history = history[: rng.randint(0, len(history))]
            elif op < 0.95:
                # Code that edits a converted message says so.
                target = rng.choice(history)
                target.parts.append(TextPart(text=f"edited {n}"))
                api.forget()
            sent = api.convert(history)
            assert sent == to_api_messages(history)
            returned.append((sent, copy.deepcopy(sent)))
        for sent, snapshot in returned:
            assert sent == snapshot


def test_breakpoints_go_on_copies_not_on_the_kept_form() -> None:
    api = ApiHistory()
    history = [
        message("user", TextPart(text="read a")),
        message(
            "assistant",
            TextPart(text="reading"),
            ToolPart(call_id="toolu_1", tool="read", input={}, status="completed", output="a"),
        ),
    ]
    for n in range(3):
        system, tools, messages = with_cache_breakpoints(
            [{"type": "text", "text": "system"}], [{"name": "read"}], api.convert(history)
        )
        assert json.dumps(messages).count("cache_control") == min(2, len(messages))
        history.append(message("user", TextPart(text=f"next {n}")))
        assert "cache_control" not in json.dumps(api.convert(history))


def test_a_message_still_running_its_tools_is_converted_again() -> None:
    api = ApiHistory()
    call = ToolPart(call_id="toolu_1", tool="bash", input={"cmd": "ls"}, status="running")
    history = [message("user", TextPart(text="list")), message("assistant", call)]
    first = api.convert(history)
    assert first[-1]["content"][0]["content"] == "(no output)"
    call.status, call.output = "completed", "a.txt"
    assert api.convert(history)[-1]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "a.txt",
    }


def test_an_edit_is_sent_once_forget_is_called() -> None:
    api = ApiHistory()
    prompt = message("user", TextPart(text="old question"))
    history = [prompt, message("assistant", TextPart(text="answer"))]
    api.convert(history)
    prompt.parts[0] = TextPart(text="new question")
    api.forget()
    assert api.convert(history)[0]["content"] == [{"type": "text", "text": "new question"}]


def strip_breakpoints(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_breakpoints(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_breakpoints(v) for v in value]
    return value


async def test_each_step_of_a_turn_sends_the_history_as_a_fresh_conversion(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    for n in range(4):
        (h.root / f"f{n}.txt").write_text(f"file {n}\n")
    api.enqueue(
        *[reply(text(f"Step {n}."), tool_use("read", {"path": f"f{n}.txt"})) for n in range(4)],
        reply(text("Done.")),
        reply(text("Second turn done.")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "read the files")
    await h.agent.prompt(session.id, "and again")
    state = await h.agent.session(session.id)
    bodies = h.accepted_requests()
    assert len(bodies) == 6
    # The request of step k was built from the messages before its assistant message.
    assistants = [i for i, m in enumerate(state.messages) if m.role == "assistant"]
    for body, index in zip(bodies, assistants, strict=True):
        assert strip_breakpoints(body["messages"]) == to_api_messages(state.messages[:index])
    # The tool results, which arrived after their message was stored, were sent.
    assert "file 3" in json.dumps(bodies[4]["messages"])


async def test_the_request_after_a_revert_leaves_the_reverted_messages_out(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(
        reply(text("First answer.")),
        reply(text("Second answer, about PINEAPPLE.")),
        reply(text("Third answer.")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "first question")
    await h.agent.prompt(session.id, "second question, about PINEAPPLE")
    state = await h.agent.session(session.id)
    await h.agent.revert(session.id, state.messages[2].id)
    await h.agent.prompt(session.id, "third question")
    last = h.accepted_requests()[-1]
    assert "PINEAPPLE" not in json.dumps(last["messages"])
    live = [m for m in state.messages if not m.reverted]
    assert strip_breakpoints(last["messages"]) == to_api_messages(live[:-1])
    assert [m.text() for m in live] == [
        "first question",
        "First answer.",
        "third question",
        "Third answer.",
    ]


async def test_an_edited_message_is_sent_as_edited_after_forget(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(text("Noted.")), reply(text("Sure.")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "the codeword is APPLE")
    state = await h.agent.session(session.id)
    state.messages[0].parts[0] = TextPart(text="the codeword is CHERRY")
    state.api.forget()
    await h.agent.prompt(session.id, "what is the codeword?")
    sent = json.dumps(h.accepted_requests()[-1]["messages"])
    assert "CHERRY" in sent and "APPLE" not in sent


async def test_a_reloaded_session_sends_what_the_live_one_would(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "a.txt").write_text("alpha\n")
    api.enqueue(
        reply(text("Reading."), tool_use("read", {"path": "a.txt"})),
        reply(text("It says alpha.")),
        reply(text("Still alpha.")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "what does a.txt say?")
    live = await h.agent.session(session.id)
    expected = to_api_messages(live.messages)

    other = await make_harness()
    reloaded = await other.agent.session(session.id)
    assert reloaded is not live
    assert reloaded.messages == live.messages
    await other.agent.prompt(session.id, "sure?")
    last = other.accepted_requests()[-1]
    assert strip_breakpoints(last["messages"])[: len(expected)] == expected
