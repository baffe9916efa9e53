"""Core events to `session/update` notifications, sent in the order they happen; and a stored
history replayed as the same notifications (session/load)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    Cost,
    CurrentModeUpdate,
    ImageContentBlock,
    PlanEntry,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from agentls.acp.tools import (
    input_content,
    kind_of,
    locations_of,
    output_content,
    stored_call,
    text_content,
)
from agentls.events import TodoItem
from agentls.history import (
    ContextPart,
    ImagePart,
    Message,
    SummaryPart,
    TextPart,
    ThinkingPart,
    ToolPart,
)
from agentls.session.finish_gate import summary as gate_summary
from agentls.session.hooks import summary as hook_summary

log = logging.getLogger(__name__)

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | UsageUpdate
    | AgentPlanUpdate
    | CurrentModeUpdate
    | AvailableCommandsUpdate
)
Send = Callable[[str, Update], Awaitable[None]]


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def plan_update(todos: list[TodoItem]) -> AgentPlanUpdate:
    """The todo list (todowrite) as ACP's plan: the whole list each time."""
    return AgentPlanUpdate(
        session_update="plan",
        entries=[
            PlanEntry(content=t.content, priority=t.priority or "medium", status=t.status)
            for t in todos
        ],
    )


def agent_text(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(session_update="agent_message_chunk", content=_text(text))


class UpdateSender:
    """Sends (session, update) pairs one at a time, in order, from one task; `flush` waits until
    everything queued so far has gone out (a prompt answers only after its updates)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._queue: asyncio.Queue[tuple[str, Update] | asyncio.Future[None]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def put(self, session_id: str, update: Update) -> None:
        self._start()
        self._queue.put_nowait((session_id, update))

    async def flush(self) -> None:
        self._start()
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(done)
        await done

    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            item = await self._queue.get()
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
                continue
            try:
                await self._send(*item)
            except Exception as exc:  # the client went away: nothing more can be shown
                log.debug("session/update not sent: %s", exc)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()


class EventRelay:
    """An event sink of one Agent (one workspace root): each event becomes the session updates
    an ACP client shows."""

    def __init__(self, root: Path, sender: UpdateSender, context_window: Callable[[], int]) -> None:
        self.root = root
        self.sender = sender
        self.context_window = context_window
        # Tool calls by id (their input, for their result's diff); questions -> their call.
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self._questions: dict[str, str] = {}

    def __call__(self, event: Any) -> None:
        if event.parent_session_id is not None:
            return  # a sub-agent's: its task call shows what it did (its questions are asked)
        update = self.update_for(event)
        if update is not None:
            self.sender.put(event.session_id, update)

    def update_for(self, event: Any) -> Update | None:
        kind = event.type
        if kind == "text-delta":
            return AgentMessageChunk(
                session_update="agent_message_chunk", content=_text(event.delta)
            )
        if kind == "thinking-delta":
            return AgentThoughtChunk(
                session_update="agent_thought_chunk", content=_text(event.delta)
            )
        if kind == "tool-call":
            self._calls[event.call_id] = (event.tool, event.input)
            return ToolCallStart(
                session_update="tool_call",
                tool_call_id=event.call_id,
                title=event.title,
                kind=kind_of(event.tool),
                status="pending",
                locations=locations_of(self.root, event.tool, event.input),
                content=input_content(self.root, event.tool, event.input),
                raw_input=event.input,
            )
        if kind == "permission-request":
            self._questions[event.request_id] = event.call_id
            return None
        if kind == "permission-resolved":
            call_id = self._questions.pop(event.request_id, None)
            if call_id is None or event.decision not in ("once", "always"):
                return None
            return ToolCallProgress(
                session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
            )
        if kind == "progress" and event.call_id in self._calls:
            # A running command's latest line, under the command itself.
            tool, data = self._calls[event.call_id]
            return ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=event.call_id,
                status="in_progress",
                content=[*input_content(self.root, tool, data), text_content(event.message)],
            )
        if kind == "tool-result":
            tool, data = self._calls.pop(event.call_id, (event.tool, {}))
            return ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=event.call_id,
                status="failed" if event.is_error else "completed",
                title=event.title,
                # The output once, in the content: no raw_output beside it (acpx, which shows
                # both, printed every output twice).
                content=output_content(self.root, tool, data, event.output),
            )
        if kind == "todo":
            return plan_update(event.todos)
        if kind == "finish-gate":  # the turn's files checked again before it could end
            line = f"\n[finish gate] {gate_summary(event)}\n"
            return AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(line))
        if kind == "hook":  # a hook (the user's command) ran: one line, as the terminal's
            line = f"\n{hook_summary(event)}\n"
            return AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(line))
        if kind == "mode":
            return CurrentModeUpdate(
                session_update="current_mode_update", current_mode_id=event.mode
            )
        if kind == "usage":
            step = event.step
            used = (
                step.input_tokens
                + step.cache_read_tokens
                + step.cache_write_tokens
                + step.output_tokens
            )
            return UsageUpdate(
                session_update="usage_update",
                used=used,
                size=self.context_window(),
                cost=Cost(amount=event.session.cost_usd, currency="USD"),
            )
        return None


def replay(root: Path, messages: list[Message]) -> list[Update]:
    """A stored history as the updates a client shows (reverted messages left out)."""
    updates: list[Update] = []
    for message in messages:
        if message.reverted:
            continue
        for part in message.parts:
            if isinstance(part, TextPart) and part.text:
                if message.role == "user":
                    updates.append(
                        UserMessageChunk(
                            session_update="user_message_chunk", content=_text(part.text)
                        )
                    )
                else:
                    updates.append(
                        AgentMessageChunk(
                            session_update="agent_message_chunk", content=_text(part.text)
                        )
                    )
            elif isinstance(part, ThinkingPart) and part.text:
                updates.append(
                    AgentThoughtChunk(
                        session_update="agent_thought_chunk", content=_text(part.text)
                    )
                )
            elif isinstance(part, ContextPart):
                updates.append(
                    UserMessageChunk(
                        session_update="user_message_chunk", content=_text(f"@{part.uri}\n")
                    )
                )
            elif isinstance(part, ImagePart):
                image = ImageContentBlock(
                    type="image", mime_type=part.media_type, data=part.data, uri=part.uri
                )
                updates.append(UserMessageChunk(session_update="user_message_chunk", content=image))
            elif isinstance(part, SummaryPart):
                updates.append(
                    AgentMessageChunk(
                        session_update="agent_message_chunk",
                        content=_text(f"(Summary of the earlier conversation)\n\n{part.text}\n\n"),
                    )
                )
            elif isinstance(part, ToolPart):
                updates.append(ToolCallStart(session_update="tool_call", **stored_call(root, part)))
    return updates
