"""Retries through the real SDK against the local Messages-API server: what is retried, how long
it waits, what a front end sees, and what is left in the history."""

from __future__ import annotations

from messages_api import (
    MessagesAPIServer,
    connection_reset,
    cut_after,
    error,
    reply,
    stream_error,
    text,
    tool_use,
)
from tests.conftest import HarnessFactory


async def test_429_honours_retry_after(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.enqueue(
        error(429, "rate_limit_error", headers={"retry-after": "0.05"}),
        error(429, "rate_limit_error", headers={"retry-after-ms": "30"}),
        reply(text("after the rate limit")),
    )
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn" and result.text == "after the rate limit"
    retries = h.of_type("retry")
    assert [(r.attempt, r.delay_ms) for r in retries] == [(1, 50), (2, 30)]
    assert all("HTTP 429" in r.reason and "rate_limit_error" in r.reason for r in retries)
    assert len(api.requests) == 3


async def test_backoff_grows_exponentially_with_jitter(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.enqueue(error(529, "overloaded_error"), error(503, "api_error"), error(502, "api_error"))
    api.enqueue(reply(text("finally")))
    h = await make_harness({"apiRetryBaseDelayS": 0.01})
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.text == "finally"
    delays = [r.delay_ms for r in h.of_type("retry")]
    # base * 2^(attempt-1), times a jitter factor in [0.75, 1.25]
    assert 7 <= delays[0] <= 13 and 15 <= delays[1] <= 25 and 30 <= delays[2] <= 50


async def test_500_is_retried(make_harness: HarnessFactory, api: MessagesAPIServer) -> None:
    api.enqueue(error(500, "api_error"), reply(text("recovered")))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn" and result.text == "recovered"
    (retry,) = h.of_type("retry")
    assert retry.attempt == 1 and "HTTP 500" in retry.reason
    h.accepted_requests()


async def test_connection_reset_before_the_first_byte_is_retried(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.enqueue(connection_reset(), reply(text("second try")))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn" and result.text == "second try"
    (retry,) = h.of_type("retry")
    assert "connection failed" in retry.reason and "Connection reset" in retry.reason
    assert api.requests[0].disconnected
    assert "".join(e.delta for e in h.of_type("text-delta")) == "second try"


async def test_bounded_attempts_end_the_turn_with_an_error_naming_the_failure(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.enqueue(*[error(529, "overloaded_error", "Overloaded") for _ in range(3)])
    api.enqueue(reply(text("later")))
    h = await make_harness({"apiMaxAttempts": 3})
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "error"
    assert result.error is not None
    assert "after 3 attempts" in result.error
    assert "HTTP 529" in result.error and "overloaded_error: Overloaded" in result.error
    assert len(h.of_type("retry")) == 2
    assert len(api.requests) == 3
    assert h.of_type("error")[0].details == result.error
    assert h.of_type("turn-end")[-1].finish_reason == "error"
    loaded = await h.store.load_messages(session.id)
    assert loaded[-1].finish_reason == "error" and loaded[-1].error == result.error
    assert loaded[-1].parts == []
    # The session is still usable.
    again = await h.agent.prompt(session.id, "again")
    assert again.text == "later"
    h.accepted_requests()


async def test_401_is_not_retried(make_harness: HarnessFactory, api: MessagesAPIServer) -> None:
    api.enqueue(error(401, "authentication_error", "invalid x-api-key"), reply(text("unused")))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "error"
    assert "HTTP 401" in (result.error or "") and "invalid x-api-key" in (result.error or "")
    assert "attempts" not in (result.error or "")
    assert h.of_type("retry") == []
    assert len(api.requests) == 1


async def test_x_should_retry_false_is_obeyed(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.enqueue(error(500, "api_error", headers={"x-should-retry": "false"}))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "error" and h.of_type("retry") == []


async def test_mid_stream_overloaded_error_event_is_retried_and_voids_the_partial_text(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    partial = reply(text("half of an answer that"), tool_use("read", {"path": "x"}), chunk_size=4)
    # message_start, ping, block start, 3 text deltas, then `event: error`.
    api.enqueue(stream_error(6, base=partial), reply(text("the whole answer")))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn" and result.text == "the whole answer"
    (retry,) = h.of_type("retry")
    assert "error event in the stream" in retry.reason and "overloaded_error" in retry.reason
    # A front end shows the partial text, then drops it at the retry event.
    at = h.events.index(retry)
    before = "".join(e.delta for e in h.events[:at] if e.type == "text-delta")
    assert before == "half of an answer that"[:12]  # the 3 deltas of 4 characters, shown
    assert [e.type for e in h.events[at + 1 :] if e.type == "retry"] == []
    after = "".join(e.delta for e in h.events[h.events.index(retry) :] if e.type == "text-delta")
    assert after == "the whole answer"
    loaded = await h.store.load_messages(session.id)
    assert [m.role for m in loaded] == ["user", "assistant"]
    assert loaded[1].text() == "the whole answer" and len(loaded[1].parts) == 1
    # The next request carries the answer once.
    await h.agent.prompt(session.id, "next")
    sent = h.accepted_requests()[-1]["messages"]
    assert sent[1]["content"] == [{"type": "text", "text": "the whole answer"}]


async def test_a_non_retryable_error_event_ends_the_turn(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.enqueue(stream_error(type="invalid_request_error", message="bad thing"))
    h = await make_harness()
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "error" and "bad thing" in (result.error or "")
    assert h.of_type("retry") == [] and len(api.requests) == 1


async def test_dropped_stream_after_a_tool_call_started_keeps_no_half_call(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    # Cut right after the tool call started streaming.
    cut = cut_after(8, reply(text("Reading."), tool_use("read", {"path": "f.txt"}), chunk_size=3))
    api.enqueue(cut, reply(text("Reading."), tool_use("read", {"path": "f.txt"})))
    api.enqueue(reply(text("done")))
    h = await make_harness()
    (h.root / "f.txt").write_text("content\n")
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn" and result.text == "done"
    assert len(h.of_type("retry")) == 1
    assert len(h.of_type("tool-call")) == 1 and len(h.of_type("tool-result")) == 1
    loaded = await h.store.load_messages(session.id)
    assert loaded[1].text() == "Reading." and len(loaded[1].tool_parts()) == 1
    h.accepted_requests()


def test_retry_after_forms() -> None:
    import email.utils
    import time

    from agentls.model.anthropic_provider import retry_after_s

    assert retry_after_s({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after": "0.5"}) == 0.5
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after_s({"retry-after": date}) or 0) <= 31
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None
