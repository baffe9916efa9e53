"""Steering a running turn: a prompt sent with mode "steer" while a turn runs waits in the
session's `steers` (Agent.prompt) and joins the turn at its next step boundary, as a user
message after the step's tool results (never between a tool call and its result: the API form
puts the results first in that user message, history.py), or after a last step that called no
tool (the turn then takes one more step). What no step took runs as a prompt of its own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentls.events import SteerEvent
from agentls.history import (
    Attachment,
    ContextPart,
    Message,
    Part,
    TextPart,
    clean_text,
    new_id,
    now_ms,
)
from agentls.session.state import SessionState
from agentls.store import Store

EventSink = Callable[[Any], None]


def user_parts(text: str, context: Sequence[Attachment]) -> list[Part]:
    """A prompt's parts: its context (files, selections, images), then its text (none when it
    is blank: a prompt of images only; the API refuses a blank text block); storable UTF-8."""
    parts: list[Part] = [
        *(
            ContextPart(
                uri=clean_text(c.uri),
                range=c.range,
                text=None if c.text is None else clean_text(c.text),
            )
            if isinstance(c, ContextPart)
            else c
            for c in context
        ),
    ]
    if text.strip():
        parts.append(TextPart(text=clean_text(text)))
    return parts


async def take_steers(state: SessionState, store: Store, emit: EventSink) -> bool:
    """Add the waiting steers to the history as one user message (stored, a `steer` event);
    whether there were any."""
    steers = [s for s in state.steers if not s.taken]
    state.steers.clear()
    if not steers:
        return False
    parts: list[Part] = []
    for steer in steers:
        steer.taken = True
        parts += user_parts(steer.text, steer.context)
    message = Message(
        id=new_id("msg"),
        session_id=state.record.id,
        role="user",
        created_at=now_ms(),
        parts=parts,
    )
    state.messages.append(message)
    await store.add_message(message)
    prompt = "\n\n".join(clean_text(s.text) for s in steers)
    emit(SteerEvent(session_id=state.record.id, message_id=message.id, prompt=prompt))
    return True
