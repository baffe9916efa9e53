"""Each way a model call fails, through the real SDK against the local Messages-API server, ends
the turn with one typed error: its kind, a sentence for a person, the next step, whether Retry
makes sense, and the details (the exception as it was)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentls.model.base import ProviderError
from agentls.model.failures import describe
from messages_api import MessagesAPIServer, error, reply, text
from tests.conftest import HarnessFactory


async def failed_turn(make_harness: HarnessFactory, settings: dict[str, Any] | None = None) -> Any:
    h = await make_harness({"apiMaxAttempts": 2, **(settings or {})})
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "error"
    (event,) = h.of_type("error")
    assert h.of_type("turn-end")[-1].finish_reason == "error"
    # The event and the result say the same; the stored message keeps the details.
    assert result.failure is not None and event.kind == result.failure.kind
    assert event.message == result.failure.message and event.details == result.error
    loaded = await h.store.load_messages(session.id)
    assert loaded[-1].error == result.error
    return event


@pytest.mark.parametrize(
    ("replies", "kind", "sentence", "retryable"),
    [
        (
            [error(401, "authentication_error", "invalid x-api-key")],
            "auth",
            "The API refused the API key (HTTP 401).",
            True,
        ),
        (
            [error(403, "permission_error")],
            "auth",
            "The API key is not allowed to use this model (HTTP 403).",
            True,
        ),
        (
            [error(429, "rate_limit_error", headers={"retry-after": "0"})] * 2,
            "rate_limit",
            "The API's rate limit was reached (HTTP 429) after 2 attempts.",
            True,
        ),
        (
            [error(529, "overloaded_error")] * 2,
            "overloaded",
            "The model's API is overloaded or failing (HTTP 529) after 2 attempts.",
            True,
        ),
        (
            [error(503, "api_error", "Service Unavailable")] * 2,
            "overloaded",
            "The model's API is overloaded or failing (HTTP 503) after 2 attempts.",
            True,
        ),
        (
            [error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000")],
            "context_too_long",
            "The conversation is too long for the model's context window.",
            False,
        ),
        (
            [error(413, "request_too_large")],
            "context_too_long",
            "The conversation is too long for the model's context window.",
            False,
        ),
        (
            [error(400, "invalid_request_error", "tools.0.name: String should match pattern")],
            "bad_request",
            "The API refused the request (HTTP 400).",
            False,
        ),
    ],
)
async def test_an_api_error_is_classified_and_said_with_its_next_step(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    replies: list[Any],
    kind: str,
    sentence: str,
    retryable: bool,
) -> None:
    api.enqueue(*replies, reply(text("unused")))
    event = await failed_turn(make_harness)
    assert (event.kind, event.message, event.retryable) == (kind, sentence, retryable)
    assert event.next_step  # every kind says what to do
    assert f"HTTP {replies[0].status}" in event.details  # the details are the exception's
    assert replies[0].message in event.details


async def test_an_unreachable_api_is_a_network_error(
    make_harness: HarnessFactory, api: MessagesAPIServer, caplog: pytest.LogCaptureFixture
) -> None:
    api.stop()  # nothing listens at its address: the connection is refused
    event = await failed_turn(make_harness)
    assert event.details in caplog.text  # the details are in the log too
    assert event.kind == "network" and event.retryable
    assert event.message == (
        "The model's API could not be reached: the connection was refused after 2 attempts."
    )
    assert "Check your network connection" in event.next_step
    assert "ConnectionRefusedError" in event.details or "Connection refused" in event.details


async def test_a_host_name_that_does_not_resolve_is_a_network_error(
    make_harness: HarnessFactory, api: MessagesAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = await make_harness({"apiMaxAttempts": 1})
    provider = h.agent.provider("claude-sonnet-5-5")
    monkeypatch.setattr(provider, "_base_url", "http://agentls-no-such-host.invalid")
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.failure is not None and result.failure.kind == "network"
    assert result.failure.message == (
        "The model's API could not be reached: its host name did not resolve."
    )


async def test_a_missing_key_is_an_auth_error(
    make_harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = await make_harness()
    provider = h.agent.provider("claude-sonnet-5-5")
    monkeypatch.setattr(provider, "_api_key", None)
    monkeypatch.setattr("agentls.model.anthropic_provider.credential", lambda name: None)
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.failure is not None and result.failure.kind == "auth"
    assert result.failure.message.startswith("No API key")
    assert "Set a valid API key" in result.failure.next_step
    assert "ANTHROPIC_API_KEY" in (result.error or "")


async def test_an_exception_inside_agentls_is_an_internal_error_and_the_turn_ends(
    make_harness: HarnessFactory, api: MessagesAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = await make_harness()

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in building the request")

    monkeypatch.setattr("agentls.session.step_request.build_system", broken)
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "error" and result.failure is not None
    assert result.failure.kind == "internal" and result.failure.retryable
    assert result.failure.message == (
        "agentls failed with an internal error (RuntimeError); this is a bug."
    )
    assert result.error == "RuntimeError: a bug in building the request"
    assert h.of_type("error")[0].details == result.error
    assert api.requests == []  # nothing was sent
    # The session is still usable.
    monkeypatch.undo()
    api.enqueue(reply(text("fine")))
    assert (await h.agent.prompt(session.id, "again")).text == "fine"


def test_a_provider_that_cannot_be_used_as_configured_says_so() -> None:
    failure = describe(ProviderError("openai needs the openai package: pip install ..."))
    assert failure.kind == "bad_request" and failure.retryable
    assert failure.message == "The model cannot be used as configured."


async def test_an_api_that_stops_answering_is_a_network_error(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    hold = threading.Event()
    api.enqueue(reply(text("never comes"), hold=hold))
    try:
        event = await failed_turn(make_harness, {"apiMaxAttempts": 1, "apiTimeoutS": 0.5})
    finally:
        hold.set()
    assert event.kind == "network" and event.retryable
    assert event.message == "The model's API could not be reached: it did not answer in time."
    assert "timed out" in event.details
