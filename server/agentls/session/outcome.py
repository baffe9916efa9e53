"""How a step's end is said: its usage (as the API reported it; for a step that did not finish,
a stop or a failure, what the stream reported before it ended, the rest estimated and marked so),
and a failed turn's error event (model/failures.py's words)."""

from __future__ import annotations

import json

from agentls.events import ErrorEvent
from agentls.history import Message, TextPart, ThinkingPart, ToolPart, Usage
from agentls.model.base import StepUsage
from agentls.model.catalog import price
from agentls.model.failures import TurnFailure
from agentls.session.stream import StreamFolder

# Characters per token, for an estimate of output the API had not reported yet (the usual rule
# of thumb for English text and code with Claude's tokenizer).
CHARS_PER_TOKEN = 4


def failure_event(session_id: str, failure: TurnFailure) -> ErrorEvent:
    """The error event a failed turn ends with: the failure's sentence as its message."""
    return ErrorEvent(
        session_id=session_id,
        message=failure.message,
        kind=failure.kind,
        next_step=failure.next_step,
        retryable=failure.retryable,
        details=failure.details,
    )


def reported_usage(model: str, begin: StepUsage | None, end: StepUsage | None) -> Usage:
    """A step's usage: message_delta's counts (cumulative), else message_start's; priced."""

    def pick(name: str) -> int:
        value = getattr(end, name, 0) if end is not None else 0
        return int(value or (getattr(begin, name, 0) if begin is not None else 0) or 0)

    step = Usage(
        input_tokens=pick("input_tokens"),
        output_tokens=pick("output_tokens"),
        cache_read_tokens=pick("cache_read_tokens"),
        cache_write_tokens=pick("cache_write_tokens"),
    )
    if any(u is not None and u.estimated for u in (begin, end)):
        step.estimated = True  # a server that reports no usage: the provider's estimate
    step.cost_usd = price(model, step)
    return step


def streamed_chars(message: Message, folder: StreamFolder) -> int:
    """How much the step streamed: its text and thinking, its tool calls' input (whole or not)."""
    total = sum(len(chunk) for chunks in folder.tool_json.values() for chunk in chunks)
    for part in message.parts:
        if isinstance(part, TextPart | ThinkingPart):
            total += len(part.text)
        elif isinstance(part, ToolPart) and part.finished is False and part.input:
            total += len(json.dumps(part.input))
    return total


def partial_usage(model: str, message: Message, folder: StreamFolder) -> Usage | None:
    """The usage of a step that did not finish (stopped, failed); None when the step finished
    (its usage is recorded) or the API reported nothing (it never started answering). The input
    and cache tokens are message_start's; the output is message_delta's when one came, else
    estimated from what streamed (CHARS_PER_TOKEN) and marked estimated."""
    if message.usage is not None or folder.begin_usage is None:
        return None
    step = reported_usage(model, folder.begin_usage, folder.end_usage)
    reported = folder.end_usage.output_tokens if folder.end_usage is not None else 0
    if not reported:
        chars = streamed_chars(message, folder)
        step.output_tokens = -(-chars // CHARS_PER_TOKEN)  # rounded up
        step.estimated = True if chars else None
        step.cost_usd = price(model, step)
    return step
