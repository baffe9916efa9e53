"""Model-side faults through the real SDK and the local Messages-API server: every case ends in a
completed turn or a clear error event, the stored history stays valid for the next prompt (the
server rejects an invalid one), and no text is shown or stored twice."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from agentls.history import Message
from messages_api import (
    MessagesAPIServer,
    Reply,
    ReplyLike,
    connection_reset,
    cut_after,
    error,
    malformed_sse,
    render_message,
    reply,
    sse_frames,
    stream_error,
    text,
    tool_use,
)
from tests.conftest import Harness, HarnessFactory
from tests.reliability.support import FULL, Figures, runs

STEP1_TEXT = "Reading the file now."
FINAL_TEXT = "All done: the file says hello."
TIMEOUT_S = 0.5
SLOW_S = 1.2


def step1() -> Reply:
    # Frames: 0 message_start, 1 ping, 2 text start, 3-8 text deltas, 9 stop, 10 tool start,
    # 11 empty JSON delta, 12-17 JSON deltas, 18 stop, 19 message_delta, 20 message_stop.
    return reply(text(STEP1_TEXT), tool_use("read", {"path": "notes.txt"}), chunk_size=4)


def step2() -> Reply:
    return reply(text(FINAL_TEXT), chunk_size=4)


def slow_headers(base: Reply) -> Callable[[dict[str, Any]], Reply]:
    def answer(body: dict[str, Any]) -> Reply:
        time.sleep(SLOW_S)  # nothing, not even the status line, before the client's timeout
        return base

    return answer


# name -> (how to break a reply, what the final error names)
FAULTS: dict[str, tuple[Callable[[Reply], ReplyLike], str]] = {
    "429 with retry-after": (
        lambda base: error(429, "rate_limit_error", headers={"retry-after": "0.01"}),
        "HTTP 429: rate_limit_error",
    ),
    "529 overloaded": (lambda base: error(529, "overloaded_error"), "HTTP 529: overloaded_error"),
    "500 api_error": (lambda base: error(500, "api_error"), "HTTP 500: api_error"),
    "connection reset before the first byte": (
        lambda base: connection_reset(),
        "connection failed",
    ),
    "stream cut inside text": (lambda base: cut_after(5, base), "stream"),
    "stream cut inside a tool call's JSON": (lambda base: cut_after(13, base), "stream"),
    "malformed SSE frame": (lambda base: malformed_sse(5, base=base), "JSONDecodeError"),
    "overloaded error event mid-stream": (
        lambda base: stream_error(5, base=base),
        "error event in the stream",
    ),
    "response slower than the timeout (between events)": (
        lambda base: replace(base, delay_s=SLOW_S),
        "timed out",
    ),
    "response slower than the timeout (no headers)": (slow_headers, "timed out"),
}

CASES = [
    pytest.param(
        fault, step, persistent, id=f"{fault}|step{step}|{'down' if persistent else 'blip'}"
    )
    for fault in FAULTS
    for step in (1, 2)
    for persistent in (False, True)
    if not (fault == "stream cut inside a tool call's JSON" and step == 2)
]


def frontend_texts(h: Harness, session_id: str) -> dict[str, str]:
    """What a front end shows per message, when at each `retry` it drops the text shown since
    the step began (the last `usage` event, which ends each step, or the turn's start)."""
    shown: dict[str, str] = {}
    step: list[tuple[str, str]] = []  # (message id, delta) since the step began
    for event in h.events:
        if getattr(event, "session_id", None) != session_id:
            continue
        if event.type == "text-delta":
            shown[event.message_id] = shown.get(event.message_id, "") + event.delta
            step.append((event.message_id, event.delta))
        elif event.type in ("usage", "turn-start"):
            step = []
        elif event.type == "retry":
            for message_id, delta in reversed(step):
                assert shown[message_id].endswith(delta)
                shown[message_id] = shown[message_id][: len(shown[message_id]) - len(delta)]
            step = []
    return {k: v for k, v in shown.items() if v}


def check_stored(messages: list[Message], h: Harness, session_id: str) -> None:
    for message in messages:
        for part in message.tool_parts():
            assert part.finished, f"unfinished tool call left in the history: {part}"
    stored = {m.id: m.text() for m in messages if m.role == "assistant" and m.text()}
    assert frontend_texts(h, session_id) == stored


async def harness(make_harness: HarnessFactory, attempts: int) -> Harness:
    h = await make_harness(
        {"permissions": {"*": "allow"}, "apiMaxAttempts": attempts, "apiTimeoutS": TIMEOUT_S}
    )
    (h.root / "notes.txt").write_text("hello\n")
    return h


@pytest.mark.parametrize(("fault", "step", "persistent"), CASES)
async def test_model_fault(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    figures: Figures,
    fault: str,
    step: int,
    persistent: bool,
) -> None:
    label = f"Model: {fault} ({'every attempt' if persistent else 'once'})"
    with figures.case(label):
        breaker, reason = FAULTS[fault]
        attempts = 2
        h = await harness(make_harness, attempts)
        replies = [step1(), step2()]
        broken = replies[step - 1]
        faults = [breaker(broken) for _ in range(attempts if persistent else 1)]
        api.enqueue(*replies[: step - 1], *faults)
        if not persistent:
            api.enqueue(*replies[step - 1 :])
        session = await h.agent.new_session()
        result = await h.agent.prompt(session.id, "go")
        loaded = await h.store.load_messages(session.id)
        check_stored(loaded, h, session.id)
        if persistent:
            assert result.finish_reason == "error"
            (event,) = h.of_type("error")
            assert event.details == result.error
            assert event.details.startswith("The model request failed after 2 attempts")
            assert reason in event.details, event.details
            assert event.kind and event.next_step and event.retryable
            # What streamed before the failure is kept as shown (check_stored), and no call of
            # the failed step is left to run.
            assert loaded[-1].error == result.error and loaded[-1].tool_parts() == []
            assert len(loaded) == 1 + step
        else:
            assert result.finish_reason == "end_turn" and result.text == FINAL_TEXT
            assert len(h.of_type("retry")) == 1 and h.of_type("error") == []
            assert [m.text() for m in loaded] == ["go", STEP1_TEXT, FINAL_TEXT]
            (call,) = loaded[1].tool_parts()
            assert call.status == "completed" and "hello" in (call.output or "")
        # The next prompt goes out with the stored history, which the server validates.
        api.enqueue(reply(text("next answer")))
        again = await h.agent.prompt(session.id, "again")
        assert again.finish_reason == "end_turn" and again.text == "next answer"
        sent = h.accepted_requests()[-1]["messages"]
        texts = [
            b["text"]
            for m in sent
            if m["role"] == "assistant"
            for b in m["content"]
            if b["type"] == "text"
        ]
        assert len(texts) == len(set(texts)), f"an assistant text was sent twice: {texts}"
        check_stored(await h.store.load_messages(session.id), h, session.id)


# ---- random fault schedules ---------------------------------------------------------------

FAST_FAULTS = [
    "429 with retry-after",
    "529 overloaded",
    "500 api_error",
    "connection reset before the first byte",
    "malformed SSE frame",
    "overloaded error event mid-stream",
]


def random_fault(rng: random.Random, base: Reply) -> tuple[ReplyLike, str]:
    """A fault for this reply: one of the fast kinds, or a cut or a broken frame at any event
    before the end of the message."""
    frames = len(sse_frames(base, render_message(base, {}, "msg_x")))
    kind = rng.choice([*FAST_FAULTS, "cut", "cut", "garbage"])
    if kind == "cut":
        return cut_after(rng.randrange(0, frames - 1), base), "cut"
    if kind == "garbage":
        return malformed_sse(rng.randrange(1, frames - 1), base=base), "garbage"
    return FAULTS[kind][0](base), kind


@pytest.mark.timeout(600 if FULL else 120)
async def test_random_fault_schedules(
    make_harness: HarnessFactory, api: MessagesAPIServer, figures: Figures
) -> None:
    """Multi-step turns where any request may fail any number of times, anywhere in its stream."""
    seed = 7
    attempts = 3
    h = await harness(make_harness, attempts)
    total = runs(15, 150)
    injected = 0
    survived = 0
    for run in range(total):
        rng = random.Random(seed * 100_003 + run)
        tool_steps = rng.randint(1, 3)
        plan = [
            reply(
                text(f"Step {k} of run {run}: reading."),
                tool_use("read", {"path": "notes.txt", "offset": 1, "limit": k + 1}),
                chunk_size=rng.choice([2, 5, 50]),
            )
            for k in range(tool_steps)
        ]
        plan.append(reply(text(f"Run {run} is done."), chunk_size=rng.choice([3, 40])))
        completed_steps = 0
        gave_up = False
        for base in plan:
            failures = rng.choice([0, 0, 1, 1, 2, 3])
            for _ in range(failures):
                fault, _kind = random_fault(rng, base)
                api.enqueue(fault)
                injected += 1
            if failures >= attempts:
                gave_up = True
                break
            api.enqueue(base)
            completed_steps += 1
        api.enqueue(reply(text(f"Run {run}, next prompt.")))
        try:
            session = await h.agent.new_session()
            result = await h.agent.prompt(session.id, f"run {run}")
            if gave_up:
                assert result.finish_reason == "error" and result.error
                assert any(e.details == result.error for e in h.of_type("error"))
            else:
                assert result.finish_reason == "end_turn", result.error
                assert result.text == f"Run {run} is done."
            loaded = await h.store.load_messages(session.id)
            check_stored(loaded, h, session.id)
            expected = [p.blocks[0].text for p in plan[:completed_steps]]  # type: ignore[union-attr]
            assert [m.text() for m in loaded[1:] if not m.error] == expected
            again = await h.agent.prompt(session.id, "next")
            assert again.text == f"Run {run}, next prompt."
            h.accepted_requests()
            assert api.pending == 0
        except BaseException:
            figures.add("Model: random fault schedules (seeded)", run + 1, survived)
            raise AssertionError(f"random fault schedule failed: seed={seed} run={run}") from None
        survived += 1
    figures.add(
        "Model: random fault schedules (seeded)",
        total,
        survived,
        note=f"{injected} faults in {total} multi-step turns",
    )
