"""The loop end to end in-process: real SDK, local Messages-API server, real SQLite, real tools."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, ClassVar

from agentls.history import TextPart, ToolPart
from agentls.store import Store
from agentls.tools.base import Tool, ToolContext, ToolInput, ToolResult
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.waiting import until

ALLOW_ALL = {"permissions": {"*": "allow"}}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    return [b for b in last["content"] if b.get("type") == "tool_result"]


async def test_text_turn_streams_persists_and_reports(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    # A pause between the deltas: each reaches the front ends as it arrives (deltas that arrive
    # together are emitted together, see the next test).
    api.enqueue(reply(text("Hello there, this is a streamed answer."), chunk_size=5, delay_s=0.01))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "Say hello")
    assert result.finish_reason == "end_turn"
    assert result.text == "Hello there, this is a streamed answer."
    deltas = "".join(e.delta for e in h.of_type("text-delta"))
    assert deltas == result.text
    assert len(h.of_type("text-delta")) > 3
    kinds = [e.type for e in h.events]
    assert kinds[0] == "turn-start" and kinds[-1] == "turn-end"
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.usage.cost_usd > 0
    # Persisted: a fresh load sees the user prompt and the answer.
    loaded = await h.store.load_messages(session.id)
    assert [m.role for m in loaded] == ["user", "assistant"]
    assert loaded[1].text() == result.text
    assert loaded[1].id == result.message_id
    record = await h.store.get_session(session.id)
    assert record is not None and record.usage.output_tokens == result.usage.output_tokens
    assert record.title == "Say hello"
    h.accepted_requests()


async def test_deltas_arriving_together_are_emitted_together_in_order(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    answer = "".join(f"line {n}: \udcff and more\n" for n in range(400))
    api.enqueue(reply(text(answer), chunk_size=3))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    deltas = h.of_type("text-delta")
    # 2,800 model deltas, sent at once: far fewer events, which still add up to the text (the
    # lone surrogate made visible in both), and all of them come before the turn's end.
    assert 0 < len(deltas) < 2800 // 10
    shown = "".join(e.delta for e in deltas)
    assert shown == result.text == answer.replace("\udcff", "\\xff")
    kinds = [e.type for e in h.events]
    assert kinds.index("turn-end") > max(i for i, k in enumerate(kinds) if k == "text-delta")


async def test_system_prompt_carries_the_environment(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / ".git").mkdir()
    (h.root / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "hi")
    system = h.accepted_requests()[0]["system"]
    system_text = system if isinstance(system, str) else "".join(b["text"] for b in system)
    assert str(h.root.resolve()) in system_text
    assert "Git branch: feature/x" in system_text
    assert "Platform: linux" in system_text
    import datetime

    assert datetime.date.today().isoformat() in system_text


async def test_read_edit_bash_task_and_valid_history(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(ALLOW_ALL)
    (h.root / "app.py").write_text("def f():\n    return 1\n")
    api.enqueue(
        reply(text("Reading."), tool_use("read", {"path": "app.py"})),
        reply(
            tool_use("edit", {"path": "app.py", "old_string": "return 1", "new_string": "return 2"})
        ),
        reply(tool_use("bash", {"command": "python3 -c 'import app; print(app.f())'"})),
        reply(text("Done: f returns 2.")),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "make f return 2")
    assert result.finish_reason == "end_turn"
    assert (h.root / "app.py").read_text() == "def f():\n    return 2\n"
    bodies = h.accepted_requests()
    assert len(bodies) == 4
    read_result = tool_results(bodies[1])[0]
    assert "return 1" in read_result["content"]
    bash_result = tool_results(bodies[3])[0]
    assert "2" in bash_result["content"] and not bash_result.get("is_error")
    # The history in memory and on disk agree.
    loaded = await h.store.load_messages(session.id)
    parts = [p for m in loaded for p in m.parts if isinstance(p, ToolPart)]
    assert [p.tool for p in parts] == ["read", "edit", "bash"]
    assert all(p.status == "completed" for p in parts)


class SlowRead(Tool):
    """A test-only read-only tool that records when each call starts and ends."""

    name: ClassVar[str] = "slow_read"
    description: ClassVar[str] = "test tool"
    read_only: ClassVar[bool] = True

    class Input(ToolInput):
        label: str

    input_model: ClassVar[type[ToolInput]] = Input

    def __init__(self, log: list[str], read_only: bool = True, name: str = "slow_read") -> None:
        self.log = log
        self.name = name  # type: ignore[misc]
        self.read_only = read_only  # type: ignore[misc]
        self.active = 0
        self.both_started = asyncio.Event()

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        self.log.append(f"start {params.label}")
        self.active += 1
        if self.active >= 2:
            self.both_started.set()
        # Read-only neighbours wait for each other: proves they overlap (with a bound, so a
        # sequential runner fails the ordering assertion instead of hanging).
        try:
            await asyncio.wait_for(self.both_started.wait(), 0.5)
        except TimeoutError:
            pass
        self.active -= 1
        self.log.append(f"end {params.label}")
        return ToolResult(f"done {params.label}")


async def test_read_only_calls_overlap_and_others_run_in_order(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    log: list[str] = []
    h = await make_harness(ALLOW_ALL)
    reader = SlowRead(log)
    writer = SlowRead(log, read_only=False, name="slow_write")
    h.agent.registry.register(reader)
    h.agent.registry.register(writer)
    api.enqueue(
        reply(
            tool_use("slow_read", {"label": "r1"}),
            tool_use("slow_read", {"label": "r2"}),
            tool_use("slow_write", {"label": "w1"}),
            tool_use("slow_write", {"label": "w2"}),
            tool_use("slow_read", {"label": "r3"}),
        ),
        reply(text("ok")),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn"
    assert log[:2] == ["start r1", "start r2"]  # both started before either ended
    assert sorted(log[2:4]) == ["end r1", "end r2"]
    assert log[4:] == ["start w1", "end w1", "start w2", "end w2", "start r3", "end r3"]
    results = tool_results(h.accepted_requests()[1])
    assert [r["content"] for r in results] == [
        "done r1",
        "done r2",
        "done w1",
        "done w2",
        "done r3",
    ]


async def test_cancel_during_stream_keeps_text_and_next_prompt_works(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    hold = threading.Event()
    api.enqueue(
        reply(text("partial answer that will be cut"), chunk_size=4, hold=hold, hold_after=5)
    )
    api.enqueue(reply(text("second answer")))
    h = await make_harness()
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "first"))
    await h.wait_for("text-delta")
    assert await h.agent.cancel(session.id)
    result = await asyncio.wait_for(turn, 30)
    hold.set()
    assert result.finish_reason == "cancelled"
    assert result.text and "partial answer".startswith(result.text[:4])
    loaded = await h.store.load_messages(session.id)
    text_parts = [p for p in loaded[1].parts if isinstance(p, TextPart)]
    assert text_parts and text_parts[0].cancelled
    assert h.of_type("turn-end")[-1].finish_reason == "cancelled"
    second = await h.agent.prompt(session.id, "again")
    assert second.finish_reason == "end_turn" and second.text == "second answer"
    bodies = h.accepted_requests()
    # The cancelled text went back to the model as what it had said.
    assert bodies[1]["messages"][1]["role"] == "assistant"


async def test_cancel_kills_running_bash_and_answers_every_call(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    pid_file = tmp_path / "ws" / "pid"  # inside the workspace: a write outside it is denied
    api.enqueue(
        reply(
            tool_use("bash", {"command": "echo $$ > pid; sleep 60 & sleep 60"}),
            tool_use("read", {"path": "nothing.txt"}),
        ),
        reply(text("after cancel")),
    )
    h = await make_harness(ALLOW_ALL)
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "run it"))
    await until(lambda: pid_file.exists() and pid_file.read_text().strip(), "bash wrote its pid")
    pid = int(pid_file.read_text())
    await h.agent.cancel(session.id)
    result = await asyncio.wait_for(turn, 30)
    assert result.finish_reason == "cancelled"
    # Within half of its `sleep 60`: it would end by itself after that.
    await until(lambda: not _alive(pid), "the bash process group ended after the cancel", 30)
    loaded = await h.store.load_messages(session.id)
    tools = [p for p in loaded[1].parts if isinstance(p, ToolPart)]
    assert [p.status for p in tools] == ["cancelled", "cancelled"]
    results = [e for e in h.of_type("tool-result")]
    assert {e.call_id for e in results} == {p.call_id for p in tools}
    second = await h.agent.prompt(session.id, "continue")
    assert second.finish_reason == "end_turn"
    body = h.accepted_requests()[1]
    sent = [b for b in body["messages"][2]["content"] if b["type"] == "tool_result"]
    assert len(sent) == 2 and all(b.get("is_error") for b in sent)


async def test_prompts_to_a_busy_session_queue_in_order(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    hold = threading.Event()
    api.enqueue(reply(text("one"), hold=hold))

    def answer_with_prompt(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]["content"]
        prompt = last if isinstance(last, str) else last[-1]["text"]
        return reply(text(f"answer to {prompt}"))

    api.default = answer_with_prompt
    h = await make_harness()
    session = await h.agent.new_session()
    first = asyncio.create_task(h.agent.prompt(session.id, "p1"))
    await until(lambda: len(api.requests) == 1, "the first prompt's request")
    second = asyncio.create_task(h.agent.prompt(session.id, "p2"))
    third = asyncio.create_task(h.agent.prompt(session.id, "p3"))
    await asyncio.sleep(0.1)
    assert h.agent.is_busy(session.id)
    assert len(api.requests) == 1  # the others wait
    hold.set()
    r1, r2, r3 = await asyncio.wait_for(asyncio.gather(first, second, third), 10)
    assert (r1.text, r2.text, r3.text) == ("one", "answer to p2", "answer to p3")
    starts = [e.prompt for e in h.of_type("turn-start")]
    assert starts == ["p1", "p2", "p3"]


async def test_cancel_also_cancels_queued_prompts(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    hold = threading.Event()
    api.enqueue(reply(text("slow"), hold=hold))
    h = await make_harness()
    session = await h.agent.new_session()
    first = asyncio.create_task(h.agent.prompt(session.id, "p1"))
    await h.wait_for("turn-start")
    queued = asyncio.create_task(h.agent.prompt(session.id, "p2"))
    await asyncio.sleep(0.05)
    await h.agent.cancel(session.id)
    r1, r2 = await asyncio.wait_for(asyncio.gather(first, queued), 5)
    hold.set()
    assert r1.finish_reason == "cancelled" and r2.finish_reason == "cancelled"
    assert [e.prompt for e in h.of_type("turn-start")] == ["p1"]


async def test_doom_loop_ends_the_turn(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "a.txt").write_text("x\n")
    for _ in range(3):
        api.enqueue(reply(tool_use("read", {"path": "a.txt"})))
    api.enqueue(reply(text("never used")), reply(text("fresh start")))
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "loop")
    assert result.finish_reason == "doom_loop"
    results = h.of_type("tool-result")
    assert len(results) == 3 and results[2].is_error and "identical" in results[2].output
    assert len(api.requests) == 3
    again = await h.agent.prompt(session.id, "next")
    assert again.finish_reason == "end_turn"
    h.accepted_requests()


async def test_step_limit(make_harness: HarnessFactory, api: MessagesAPIServer) -> None:
    h = await make_harness({"maxSteps": 2})
    (h.root / "a.txt").write_text("x\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"})),
        reply(tool_use("list", {})),
        reply(text("unused")),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "max_steps"
    assert len(api.requests) == 2


async def test_bad_tool_input_and_unknown_tool_are_errors_the_model_reads(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(
        reply(
            tool_use("nope", {"x": 1}),
            tool_use("read", {"wrong": 1}),
            tool_use("read", input_json='{"path": '),
        ),
        reply(text("recovered")),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn"
    results = tool_results(h.accepted_requests()[1])
    assert len(results) == 3 and all(r.get("is_error") for r in results)
    assert "Unknown tool 'nope'" in results[0]["content"]
    assert "path" in results[1]["content"]
    assert "not valid JSON" in results[2]["content"]


async def test_provider_error_ends_turn_with_error_and_session_recovers(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    from messages_api import error

    api.enqueue(error(400, "invalid_request_error", "prompt is too long"), reply(text("fine now")))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "first")
    assert result.finish_reason == "error"
    assert "prompt is too long" in (result.error or "")
    assert "prompt is too long" in h.of_type("error")[0].details
    assert len(api.all_requests) == 1  # a 400 is not retried
    again = await h.agent.prompt(session.id, "second")
    assert again.text == "fine now"


async def test_retry_on_overload_voids_partial_stream(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    from messages_api import cut_after, error

    api.enqueue(
        error(529, "overloaded_error"),
        cut_after(6, reply(text("duplicated? no, never"), chunk_size=3)),
        reply(text("clean answer")),
    )
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn"
    assert result.text == "clean answer"
    assert len(h.of_type("retry")) == 2
    loaded = await h.store.load_messages(session.id)
    assert loaded[1].text() == "clean answer"


def _lagging(method: Any, delay_s: float, calls: list[str], name: str) -> Any:
    """A store method that waits before it writes (a busy disk, another process's lock)."""

    async def lagging(*args: Any, **kwargs: Any) -> Any:
        calls.append(f"{name} start")
        await asyncio.sleep(delay_s)
        result = await method(*args, **kwargs)
        calls.append(f"{name} done")
        return result

    return lagging


async def test_the_stream_does_not_wait_for_its_writes_which_land_in_order_before_the_step_ends(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    (Path(make_harness.tmp_path) / "ws").mkdir(exist_ok=True)
    (Path(make_harness.tmp_path) / "ws" / "a.py").write_text("x = 1\n")
    api.enqueue(
        reply(
            text("First block."),
            text("Second block."),
            tool_use("read", {"path": "a.py"}),
            chunk_size=100,
        )
    )
    api.enqueue(reply(text("It sets x.")))
    h = await make_harness(ALLOW_ALL)
    calls: list[str] = []
    # The assistant message lands after its parts would have (were they not in order): the
    # parts' foreign key would refuse them.
    h.store.add_message = _lagging(h.store.add_message, 0.2, calls, "add")  # type: ignore[method-assign]
    h.store.save_part = _lagging(h.store.save_part, 0.05, calls, "part")  # type: ignore[method-assign]
    seen: dict[str, list[str]] = {}

    def watch(event: Any) -> None:
        if event.type == "text-delta" and "Second" in event.delta:
            seen.setdefault("second block shown", list(calls))
        elif event.type == "tool-call":
            seen.setdefault("tool call announced", list(calls))

    h.agent.subscribe(watch)
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "what does a.py do?")
    assert result.finish_reason == "end_turn" and result.text == "It sets x."
    # The second block streamed while the first one's write was still under way...
    assert "part done" not in seen["second block shown"]
    # ...but a tool call is announced once stored, with everything before it.
    assert seen["tool call announced"].count("part done") == 3
    assert seen["tool call announced"].index("add done") < seen["tool call announced"].index(
        "part start"
    )
    state = await h.agent.session(session.id)
    fresh = await Store.open(h.store.path)
    try:
        loaded = await fresh.load_messages(session.id)
    finally:
        await fresh.close()
    assert [m.model_dump() for m in loaded] == [m.model_dump() for m in state.messages]
    kinds = [type(p).__name__ for p in loaded[1].parts]
    assert kinds == ["TextPart", "TextPart", "ToolPart"]
    tool = loaded[1].parts[2]
    assert isinstance(tool, ToolPart) and tool.status == "completed"
    assert "x = 1" in (tool.output or "")


async def test_a_cancel_while_stream_writes_are_under_way_waits_for_them(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    hold = threading.Event()
    # Held after the first block's end: message_start, ping, block start, delta, block stop.
    api.enqueue(
        reply(text("first block"), text("never sent"), chunk_size=100, hold=hold, hold_after=5)
    )
    h = await make_harness()
    calls: list[str] = []
    h.store.add_message = _lagging(h.store.add_message, 0.3, calls, "add")  # type: ignore[method-assign]
    h.store.save_part = _lagging(h.store.save_part, 0.3, calls, "part")  # type: ignore[method-assign]
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    await h.wait_for("text-delta")
    await asyncio.sleep(0.05)  # the block's end has been read: its write is queued
    assert await h.agent.cancel(session.id)
    result = await asyncio.wait_for(turn, 10)
    hold.set()
    assert result.finish_reason == "cancelled" and result.text == "first block"
    # The user's message, the assistant's and its part were all written before the cancel's
    # own writes (which replace the parts and mark the message cancelled).
    assert calls.count("add done") == 2 and calls.count("part done") == 1
    fresh = await Store.open(h.store.path)
    try:
        loaded = await fresh.load_messages(session.id)
    finally:
        await fresh.close()
    assert loaded[1].finish_reason == "cancelled"
    assert [p.text for p in loaded[1].parts if isinstance(p, TextPart)] == ["first block"]


async def test_a_failed_stream_write_fails_the_turn_instead_of_being_lost(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:

    api.enqueue(reply(text("an answer the disk will not take")))
    api.enqueue(reply(text("fine now")))
    h = await make_harness()
    real_save_part = h.store.save_part

    async def failing(*args: Any, **kwargs: Any) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    h.store.save_part = failing  # type: ignore[method-assign]
    session = await h.agent.new_session()
    try:
        outcome: Any = await asyncio.wait_for(h.agent.prompt(session.id, "go"), 10)
    except sqlite3.OperationalError as exc:
        outcome = exc
    assert isinstance(outcome, sqlite3.OperationalError), outcome
    assert not h.agent.is_busy(session.id)
    h.store.save_part = real_save_part  # type: ignore[method-assign]
    again = await asyncio.wait_for(h.agent.prompt(session.id, "again"), 10)
    assert again.text == "fine now"


async def test_idle_sessions_beyond_the_limit_leave_memory_and_come_back_whole(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(keep_idle_sessions=2)
    ids = []
    for n in range(4):
        api.enqueue(reply(text(f"answer {n}")))
        session = await h.agent.new_session()
        await h.agent.prompt(session.id, f"question {n}")
        ids.append(session.id)
    # The two most recently used stay loaded, the others were dropped.
    assert list(h.agent._sessions) == ids[2:]
    # A dropped one is loaded again, whole: the model gets its history.
    api.enqueue(reply(text("again 0")))
    again = await h.agent.prompt(ids[0], "and now?")
    assert again.text == "again 0"
    sent = h.accepted_requests()[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "question 0" in repr(sent[0]) and "answer 0" in repr(sent[1])
    assert list(h.agent._sessions) == [ids[3], ids[0]]


async def test_a_session_running_a_turn_is_never_dropped(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    hold = threading.Event()
    api.enqueue(reply(text("the long answer"), hold=hold))
    h = await make_harness(keep_idle_sessions=1)
    busy = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(busy.id, "go"))
    await h.wait_for("turn-start")
    state = h.agent._sessions[busy.id]
    others = [await h.agent.new_session() for _ in range(3)]
    for other in others:
        await h.agent.session(other.id)
    assert h.agent._sessions[busy.id] is state  # still loaded, the very same state
    assert h.agent.is_busy(busy.id)
    hold.set()
    result = await asyncio.wait_for(turn, 10)
    assert result.text == "the long answer"
    assert [m.role for m in state.messages] == ["user", "assistant"]
    # Idle now: the next load of another session drops it; it comes back from the store.
    await h.agent.session(others[0].id)
    assert busy.id not in h.agent._sessions
    reloaded = await h.agent.session(busy.id)
    assert reloaded is not state
    assert [m.model_dump() for m in reloaded.messages] == [m.model_dump() for m in state.messages]


async def test_a_cancel_while_a_dropped_session_loads_again_ends_its_prompt(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.enqueue(reply(text("first")))
    h = await make_harness(keep_idle_sessions=1)
    dropped = await h.agent.new_session()
    await h.agent.prompt(dropped.id, "one")
    await h.agent.new_session()  # drops it
    assert dropped.id not in h.agent._sessions
    calls: list[str] = []
    h.store.load_messages = _lagging(h.store.load_messages, 0.3, calls, "load")  # type: ignore[method-assign]
    api.enqueue(reply(text("must not be asked for")))
    sent_before = len(api.all_requests)
    turn = asyncio.create_task(h.agent.prompt(dropped.id, "two"))
    while "load start" not in calls:
        await asyncio.sleep(0.01)
    assert await h.agent.cancel(dropped.id) is True
    result = await asyncio.wait_for(turn, 10)
    assert result.finish_reason == "cancelled"
    assert len(api.all_requests) == sent_before  # the model was never asked
    # A later prompt is not affected by that cancel.
    again = await asyncio.wait_for(h.agent.prompt(dropped.id, "three"), 10)
    assert again.text == "must not be asked for"


async def test_a_second_cancel_does_not_interrupt_the_first_ones_saving(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    hold = threading.Event()
    api.enqueue(reply(text("partial text"), chunk_size=4, hold=hold, hold_after=5))
    h = await make_harness()
    calls: list[str] = []
    h.store.replace_parts = _lagging(h.store.replace_parts, 0.3, calls, "replace")  # type: ignore[method-assign]
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    await h.wait_for("text-delta")
    assert await h.agent.cancel(session.id)
    while "replace start" not in calls:
        await asyncio.sleep(0.01)
    assert await h.agent.cancel(session.id)  # clicked twice: the turn is still finishing
    result = await asyncio.wait_for(turn, 10)
    hold.set()
    assert result.finish_reason == "cancelled"
    assert h.of_type("turn-end")[-1].finish_reason == "cancelled"
    fresh = await Store.open(h.store.path)
    try:
        loaded = await fresh.load_messages(session.id)
    finally:
        await fresh.close()
    assert loaded[1].finish_reason == "cancelled" and loaded[1].text()


async def test_two_equal_blocks_are_each_stored(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.enqueue(reply(text("Same words."), text("Same words.")))
    h = await make_harness()
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "say it twice")
    fresh = await Store.open(h.store.path)
    try:
        loaded = await fresh.load_messages(session.id)
    finally:
        await fresh.close()
    assert [p.text for p in loaded[1].parts if isinstance(p, TextPart)] == [
        "Same words.",
        "Same words.",
    ]


async def test_a_new_process_continues_a_session_with_the_same_history(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(ALLOW_ALL)
    (h.root / "notes.txt").write_text("alpha\n")
    session = await h.agent.new_session()
    for k in range(3):
        api.enqueue(
            reply(text(f"Reading {k}."), tool_use("read", {"path": "notes.txt"})),
            reply(text(f"Done {k}.")),
        )
        result = await h.agent.prompt(session.id, f"task {k}")
        assert result.finish_reason == "end_turn"

    # Another process (another store and agent) loads the session from its rows, and its next
    # request carries the same history as this one's would.
    state = await h.agent.session(session.id)
    second = await make_harness(ALLOW_ALL)
    assert await second.store.load_messages(session.id) == state.messages
    api.enqueue(reply(text("Third agent answer.")))
    await second.agent.prompt(session.id, "and now?")
    body = second.accepted_requests()[-1]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"] * 6 + ["user"]
    assert "alpha" in json.dumps(body["messages"][1:3])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
