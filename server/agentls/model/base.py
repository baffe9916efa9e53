"""The Provider seam: one streamed model reply, as normalized events, whatever the backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass
class ModelRequest:
    model: str
    system: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_tokens: int
    thinking: dict[str, Any] | None = None
    # The API's output_config ({"effort": ...}, model/thinking.py effort_request); None: left out.
    output_config: dict[str, Any] | None = None
    # Put prompt-caching breakpoints on the request (providers that cache; see model/caching.py).
    cache: bool = True


@dataclass
class BlockStart:
    index: int
    kind: Literal["text", "thinking", "tool_use"]
    tool_id: str | None = None
    tool_name: str | None = None
    # Redacted thinking: the encrypted block the API sent instead of thinking text.
    data: str | None = None


@dataclass
class TextDelta:
    index: int
    text: str


@dataclass
class ThinkingDelta:
    index: int
    text: str


@dataclass
class SignatureDelta:
    index: int
    signature: str


@dataclass
class ToolInputDelta:
    index: int
    partial_json: str


@dataclass
class BlockStop:
    index: int


@dataclass
class StepUsage:
    """Token counts as the API reports them (message_start, then cumulative in message_delta)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # The server reported none: the provider counted them itself (marked so in the history).
    estimated: bool = False


@dataclass
class MessageEnd:
    stop_reason: str | None
    usage: StepUsage = field(default_factory=StepUsage)


@dataclass
class MessageBegin:
    message_id: str
    usage: StepUsage = field(default_factory=StepUsage)


@dataclass
class RetryNotice:
    """The provider is about to retry; whatever this step streamed so far is void."""

    attempt: int
    delay_ms: int
    reason: str


StreamEvent = (
    MessageBegin
    | BlockStart
    | TextDelta
    | ThinkingDelta
    | SignatureDelta
    | ToolInputDelta
    | BlockStop
    | MessageEnd
    | RetryNotice
)


# What kind of failure ended a turn (model/failures.py says each in words, with the next step).
ErrorKind = Literal[
    "network",  # the API could not be reached: refused, DNS, timeout, a broken stream
    "auth",  # no key, or the key was refused (401/403)
    "rate_limit",  # 429
    "overloaded",  # 529/503 and the API's other 5xx
    "context_too_long",  # the prompt is too long for the model
    "bad_request",  # another 4xx, or a provider that cannot be used as configured
    "internal",  # an exception inside agentls (a bug)
]


class ProviderError(Exception):
    """The model could not answer; the message says what failed (the details, for the log and a
    disclosure); `kind` classifies it, `status` is the HTTP status when there was one."""

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind = "bad_request",
        status: int | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.status = status
        self.attempts = attempts


class Provider(Protocol):
    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...
