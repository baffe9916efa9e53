"""What ended a turn, said once for every front end: the kind of failure, a sentence saying what
happened, the next step, whether Retry makes sense, and the details (the exception, for the log
and a disclosure). A ProviderError carries its kind (model/retrying.py classifies the SDKs'
errors); any other exception of a turn is an internal error, a bug of agentls.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentls.model.base import ErrorKind, ProviderError


@dataclass(frozen=True)
class TurnFailure:
    kind: ErrorKind
    message: str  # what happened, one sentence for a person
    next_step: str  # what to do about it
    retryable: bool  # whether Retry (agent/retry) makes sense
    details: str  # the exception as it was


# The OS or library words of a connection failure, and what they mean.
_NETWORK_CAUSES = (
    ("ConnectionRefused", "the connection was refused"),
    ("Connection refused", "the connection was refused"),
    ("gaierror", "its host name did not resolve"),
    ("Name or service not known", "its host name did not resolve"),
    ("nodename nor servname", "its host name did not resolve"),
    ("Temporary failure in name resolution", "its host name did not resolve"),
    ("timed out", "it did not answer in time"),
    ("stream broken", "the connection dropped in the middle of the answer"),
    ("Connection reset", "the connection was reset"),
)


def _network_cause(details: str) -> str:
    for needle, cause in _NETWORK_CAUSES:
        if needle in details:
            return cause
    return "the connection failed"


def _status(exc: ProviderError) -> str:
    return f" (HTTP {exc.status})" if exc.status and exc.status != 200 else ""


def _attempts(exc: ProviderError) -> str:
    return f" after {exc.attempts} attempts" if exc.attempts > 1 else ""


def describe(exc: BaseException) -> TurnFailure:
    """The failure `exc` ended a turn with, in words for a person."""
    if not isinstance(exc, ProviderError):
        name = type(exc).__name__
        return TurnFailure(
            "internal",
            f"agentls failed with an internal error ({name}); this is a bug.",
            "Retry; if it fails again, report it with the details below (they are in the log too).",
            True,
            f"{name}: {exc}" if str(exc) else name,
        )
    details = str(exc)
    kind = exc.kind
    if kind == "network":
        return TurnFailure(
            kind,
            f"The model's API could not be reached: {_network_cause(details)}{_attempts(exc)}.",
            "Check your network connection (and the provider's baseUrl if you set one), then Retry.",
            True,
            details,
        )
    if kind == "auth":
        if exc.status is None:
            message = "No API key (or other credentials) is set for this model's provider."
        elif exc.status == 403:
            message = "The API key is not allowed to use this model (HTTP 403)."
        else:
            message = f"The API refused the API key{_status(exc)}."
        return TurnFailure(
            kind,
            message,
            "Set a valid API key for the provider (the panel's Set API key, or its environment "
            "variable), then Retry.",
            True,
            details,
        )
    if kind == "rate_limit":
        return TurnFailure(
            kind,
            f"The API's rate limit was reached{_status(exc)}{_attempts(exc)}.",
            "Wait a minute, then Retry (or choose another model).",
            True,
            details,
        )
    if kind == "overloaded":
        return TurnFailure(
            kind,
            f"The model's API is overloaded or failing{_status(exc)}{_attempts(exc)}.",
            "Retry in a moment, or choose another model.",
            True,
            details,
        )
    if kind == "context_too_long":
        return TurnFailure(
            kind,
            "The conversation is too long for the model's context window.",
            "Run /compact to summarize the conversation, or start a new session; Retry as it is "
            "would fail again.",
            False,
            details,
        )
    if kind == "internal":
        return TurnFailure(
            kind,
            "agentls failed with an internal error; this is a bug.",
            "Retry; if it fails again, report it with the details below.",
            True,
            details,
        )
    if exc.status is None:  # a provider that cannot be used as configured
        return TurnFailure(
            kind,
            "The model cannot be used as configured.",
            "Fix the model or provider settings as the details say (agentls models lists the "
            "models), then Retry.",
            True,
            details,
        )
    # An OpenAI-compatible server's refusal names the server and what it refused (openai_provider).
    said = details.removeprefix("The model request failed: ")
    refused = (
        said[:1].upper() + said[1:].rstrip(".") + "." if "provider's server (" in said else None
    )
    return TurnFailure(
        kind,
        refused or f"The API refused the request{_status(exc)}.",
        "Retry will not help as it is: check the model and provider settings; if they are "
        "right, report it with the details below.",
        False,
        details,
    )
