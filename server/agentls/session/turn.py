"""The loop of one turn: a prompt answered in steps (stream a message, run its tools, repeat).

A Turn gets its collaborators (TurnParts: the store, the provider, the tools, the policy, the
event sink, the asker, ...), never the Agent. It streams each step through a StreamFolder,
stores what it can without waiting (write-behind), batches the streamed deltas per network read,
runs tool calls through ToolCalls, and ends cleanly whatever ends it: the last step, an error, a
cancel (finish_cancelled), or a store fault (fail_on_store).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from agentls.events import (
    ErrorEvent,
    RetryEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallEvent,
    TurnEnd,
    TurnStart,
    UsageEvent,
)
from agentls.history import (
    ApiHistory,
    Attachment,
    FinishReason,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolPart,
    Usage,
    clean_text,
    new_id,
    now_ms,
    repair_interrupted,
)
from agentls.model.base import ModelRequest, Provider, ProviderError, RetryNotice, StepUsage
from agentls.model.failures import TurnFailure, describe
from agentls.session.calls import CANCELLED_OUTPUT, CallEnv, ToolCalls, publish_result
from agentls.session.compaction import Compactor
from agentls.session.finish_gate import FinishGate
from agentls.session.hooks import SessionHooks
from agentls.session.images import prompt_title
from agentls.session.instructions import Instructions
from agentls.session.outcome import failure_event, partial_usage, reported_usage
from agentls.session.policy import Policy
from agentls.session.questions import Asker
from agentls.session.retry import resume_failed
from agentls.session.state import SessionState, TurnResult
from agentls.session.steering import take_steers, user_parts
from agentls.session.step_request import step_request
from agentls.session.stream import FinishedBlock, StreamedText, StreamFolder
from agentls.session.system_prompt import PromptKind
from agentls.store import Store, StoreError
from agentls.tools.base import ToolResult
from agentls.tools.registry import ToolRegistry
from agentls.workspace.protocol import Workspace

log = logging.getLogger(__name__)

EventSink = Callable[[Any], None]


@dataclass
class TurnParts:
    """The collaborators of a turn."""

    store: Store
    provider: Provider
    registry: ToolRegistry
    policy: Policy
    emit: EventSink
    ask: Asker
    workspace: Workspace
    root: Path
    instructions: Instructions
    # Before each step (first: the turn's first): bring the tool set up to date (MCP servers
    # started at a session's first turn, their tool lists changed); returns errors to show.
    prepare_tools: Callable[[bool], Awaitable[list[str]]] | None = None
    # The task tool's sub-agents (session/subagents.py SubAgents.run): given the turn's
    # add_usage first, so a sub-agent's usage counts into this turn's. None: no sub-agents.
    run_task: Callable[..., Awaitable[ToolResult]] | None = None
    # Whom the system prompt is for: the front end, the kind of agent (system_prompt.py).
    prompt: PromptKind = PromptKind()


def uncancel() -> None:
    """The current task's cancel is handled: later awaits of it are not cancelled again."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def _outcome_fetched(task: asyncio.Task[None]) -> None:
    """A write_behind task's outcome, fetched so that asyncio does not log "exception was never
    retrieved" for a failure nobody awaited (the turn ended another way)."""
    if not task.cancelled():
        task.exception()


def _finish_of(stop_reason: str | None) -> FinishReason:
    if stop_reason == "tool_use":
        return "tool_use"
    if stop_reason == "max_tokens":
        return "max_tokens"
    if stop_reason == "refusal":  # the model declined (its safety classifiers): said as such
        return "refusal"
    return "end_turn"


class Turn:
    """The state of one running turn, so a cancel at any await can be finished cleanly."""

    def __init__(self, parts: TurnParts, state: SessionState, model: str | None = None) -> None:
        self.parts = parts
        self.state = state
        self.store = parts.store
        self.session_id = state.record.id
        self.model = model or state.record.model
        self.usage = Usage()
        self.assistant: Message | None = None
        self.folder: StreamFolder | None = None  # the current step's
        # Deltas received but not yet emitted: one event per batch (what arrived before the
        # stream next waits for the network), not one per delta. See queue_delta.
        self.pending_deltas: list[str] = []
        self.pending_kind: type[TextDeltaEvent] | type[ThinkingDeltaEvent] | None = None
        self.pending_flush: asyncio.Handle | None = None
        self.last_assistant_id: str | None = None
        self.final_text = ""
        self.hooks = SessionHooks(
            parts.policy, parts.root, state, parts.store, self.emit, parts.prompt.kind == "subagent"
        )
        self.calls = ToolCalls(
            CallEnv(
                state=state,
                root=parts.root,
                workspace=parts.workspace,
                store=parts.store,
                registry=parts.registry,
                policy=parts.policy,
                ask=parts.ask,
                emit=self.emit,
                run_task=partial(parts.run_task, self.add_usage) if parts.run_task else None,
                hooks=self.hooks,
            )
        )
        self.gate = FinishGate.of(self.calls.env, enabled=parts.prompt.kind != "subagent")
        self.compactor = Compactor(
            state=state,
            model=self.model,
            provider=parts.provider,
            store=parts.store,
            policy=parts.policy,
            emit=self.emit,
            add_usage=self.add_usage,
        )
        # The store writes of the stream phase, started and not waited for (see write_behind).
        self.writes: asyncio.Task[None] | None = None

    def emit(self, event: Any) -> None:
        self.flush_deltas()  # streamed text first: events keep the order they happened in
        self.parts.emit(event)

    def add_usage(self, usage: Usage) -> Usage:
        self.usage = self.usage.add(usage)
        return self.usage

    # ---- writes and deltas --------------------------------------------------------------

    def write_behind(self, write: Callable[[], Awaitable[None]]) -> None:
        """Start a store write, after the ones started before it, without waiting for it: the
        step goes on meanwhile (the SDK builds and sends the request while the new assistant
        message is stored; the stream goes on while a finished text block is). The step's end
        waits for them (settle_writes) before it stores the step as done, and before any other
        write of the turn: a completed step is on disk, in the order it happened, as before; so
        is a tool call before its tool-call event."""
        previous = self.writes

        async def after_previous() -> None:
            if previous is not None:
                await previous  # a failed write fails those after it: the first one is raised
            await write()

        task = asyncio.ensure_future(after_previous())
        task.add_done_callback(_outcome_fetched)
        self.writes = task

    async def settle_writes(self) -> None:
        """Wait for the writes write_behind started; raises the first that failed. A cancel of
        the turn meanwhile does not stop them (finish_cancelled waits for them again)."""
        writes = self.writes
        if writes is None:
            return
        await asyncio.shield(writes)
        if self.writes is writes:
            self.writes = None

    def queue_delta(self, kind: type[TextDeltaEvent] | type[ThinkingDeltaEvent], text: str) -> None:
        """A text or thinking delta for the front ends. The SDK hands over the events of one
        network read back to back without yielding to the event loop; they are emitted together
        once it does (call_soon), so a fast stream costs one event per read instead of one per
        delta, and a slow one still shows each delta as it arrives."""
        if self.pending_kind is not kind:
            self.flush_deltas()
            self.pending_kind = kind
        self.pending_deltas.append(text)
        if self.pending_flush is None:
            self.pending_flush = asyncio.get_running_loop().call_soon(self.flush_deltas)

    def flush_deltas(self) -> None:
        if self.pending_flush is not None:
            self.pending_flush.cancel()
            self.pending_flush = None
        if not self.pending_deltas:
            return
        kind, pending = self.pending_kind, self.pending_deltas
        self.pending_deltas = []
        # clean_text of the joined text equals the join of each delta cleaned: lone surrogates
        # stay lone when strings are concatenated.
        delta = clean_text("".join(pending))
        message_id = self.assistant.id if self.assistant is not None else None
        assert kind is not None
        self.parts.emit(kind(session_id=self.session_id, delta=delta, message_id=message_id))

    def flush_text(self) -> None:
        if self.folder is not None:
            self.folder.flush_text()

    # ---- the loop -----------------------------------------------------------------------

    async def run(self, text: str | None, context: Sequence[Attachment]) -> TurnResult:
        """The turn of prompt `text`; None: agent/retry (retry.py), the session's last turn,
        which failed, goes on from its failed step."""
        state = self.state
        if text is None:
            user = await resume_failed(state, self.store)
            self.emit(
                TurnStart(
                    session_id=self.session_id, message_id=user.id, prompt=user.text(), retry=True
                )
            )
            return await self.loop()
        text = clean_text(text)  # JSON from an editor may carry lone surrogates
        added = await self.hooks.on_prompt(text)  # SessionStart, UserPromptSubmit
        if added is None:  # a hook blocked the prompt: not stored, never sent
            return await self.end("end_turn")
        self.gate.start()  # a new prompt: nothing changed yet (a retry goes on with the record)
        user = Message(
            id=new_id("msg"),
            session_id=self.session_id,
            role="user",
            created_at=now_ms(),
            parts=[*user_parts(text, context), *added],
        )
        state.messages.append(user)
        await self.store.add_message(user)
        title = prompt_title(text, context)
        if state.record.title == "New session" and title:
            state.record.title = title
            await self.store.update_session(self.session_id, title=title)
        self.emit(TurnStart(session_id=self.session_id, message_id=user.id, prompt=text))
        return await self.loop()

    async def loop(self) -> TurnResult:
        """The turn's steps, to its end."""
        state = self.state
        finish: FinishReason = "max_steps"
        failure: TurnFailure | None = None
        for number in range(self.parts.policy.settings.max_steps):
            try:
                await self.prepare_tools(first=number == 0)
                await self.hooks.before_compact(self.compactor)  # PreCompact
                await self.compactor.maybe_compact()
                # At each step: an approved plan (exit_plan) switches to build mode mid-turn.
                stop_reason = await self.step()
            except ProviderError as exc:
                failure = describe(exc)
                log.warning("session %s: the model call failed: %s", self.session_id, exc)
            except StoreError:
                raise  # the Agent ends the turn with fail_on_store
            except Exception as exc:  # a bug of agentls: said as one, and the turn ends
                log.exception("session %s: the turn failed", self.session_id)
                failure = describe(exc)
            if failure is not None:
                await self.close_step_after_error(failure.details)
                self.emit(failure_event(self.session_id, failure))
                finish = "error"
                break
            assert self.assistant is not None
            tool_parts = [p for p in self.assistant.parts if isinstance(p, ToolPart)]
            if tool_parts:
                if await self.calls.run(self.assistant, tool_parts):
                    finish = "doom_loop"
                    break
                if self.hooks.stopped:  # a hook answered `continue: false`
                    finish = "end_turn"
                    break
                await take_steers(state, self.store, self.emit)  # after the tool results
                continue
            if await take_steers(state, self.store, self.emit):  # sent during the last step
                continue
            if await self.gate.holds():  # new errors in what the turn changed: one more step
                continue
            if await self.hooks.stop_holds():  # a Stop hook sent the model back to work
                continue
            finish = _finish_of(stop_reason)
            if finish == "tool_use":  # its calls were cut unfinished and dropped
                finish = "end_turn"
            break
        return await self.end(finish, failure)

    async def prepare_tools(self, first: bool) -> None:
        if self.parts.prepare_tools is None:
            return
        for problem in await self.parts.prepare_tools(first):
            # Said, and the turn goes on (without the tools of a server that failed).
            self.emit(ErrorEvent(session_id=self.session_id, message=problem))

    async def end(self, finish: FinishReason, failure: TurnFailure | None = None) -> TurnResult:
        if self.assistant is not None:
            self.final_text = self.assistant.text()
            if self.assistant.finish_reason != finish and finish != "end_turn":
                self.assistant.finish_reason = finish
                await self.store.update_message(self.assistant)
        self.emit(
            TurnEnd(
                session_id=self.session_id, finish_reason=finish, message_id=self.last_assistant_id
            )
        )
        return TurnResult(
            self.session_id,
            self.last_assistant_id,
            finish,
            self.final_text,
            self.usage,
            failure.details if failure is not None else None,
            failure,
        )

    # ---- one step: stream one assistant message ---------------------------------------

    async def step(self) -> str | None:
        state = self.state
        parts = self.parts
        registry = parts.registry
        request = step_request(
            model=self.model,
            state=state,
            registry=registry,
            policy=parts.policy,
            languages=parts.workspace.languages,
            prompt=parts.prompt,
            root=parts.root,
            instructions=parts.instructions,
        )
        assistant = Message(
            id=new_id("msg"), session_id=self.session_id, role="assistant", created_at=now_ms()
        )
        self.assistant = assistant
        self.last_assistant_id = assistant.id

        def title_of(tool_name: str, tool_input: dict[str, Any]) -> str:
            tool = registry.get(tool_name)
            return tool.title(tool_input) if tool else tool_name

        folder = self.folder = StreamFolder(assistant, title_of)
        state.messages.append(assistant)
        # As it is now (no parts yet): the stream adds parts to the one in memory meanwhile.
        self.write_behind(
            partial(self.store.add_message, assistant.model_copy(update={"parts": []}))
        )
        await self.stream_answer(request, folder)
        folder.flush_text()
        await self.settle_writes()
        # Blocks the stream never closed (max_tokens inside a tool call) are dropped: a tool_use
        # with half its input can be neither run nor sent back.
        folder.drop_unfinished_tools()
        for part in folder.unfinished():
            if isinstance(part, TextPart | ThinkingPart):
                await self.save_part(part)
        step_usage = self.record_usage(folder.begin_usage, folder.end_usage)
        assistant.finish_reason = _finish_of(folder.stop_reason)
        # The message and the session's totals in one transaction (a commit and a few trips
        # to the database's thread saved at every step).
        await self.store.update_message(assistant, session_usage=step_usage)
        session = self.state.record
        self.emit(
            UsageEvent(
                session_id=self.session_id,
                step=step_usage,
                turn=self.usage,
                session=session.usage,
                subagents=session.subagent_usage,
            )
        )
        return folder.stop_reason

    async def stream_answer(self, request: ModelRequest, folder: StreamFolder) -> None:
        """The model's answer as it streams: deltas queued, finished blocks saved, a retry's
        partial answer voided."""
        async for event in self.parts.provider.stream(request):
            folded = folder.fold(event)
            if isinstance(folded, StreamedText):
                kind = TextDeltaEvent if folded.kind == "text" else ThinkingDeltaEvent
                self.queue_delta(kind, folded.text)
            elif isinstance(folded, FinishedBlock):
                await self.block_finished(folded.part)
            elif isinstance(event, RetryNotice):
                await self.void_step()
                self.emit(
                    RetryEvent(
                        session_id=self.session_id,
                        attempt=event.attempt,
                        delay_ms=event.delay_ms,
                        reason=event.reason,
                    )
                )

    async def block_finished(self, part: Part) -> None:
        self.save_part_behind(part)
        if isinstance(part, ToolPart):
            # Stored before it is announced: a front end that saw a call start finds it in the
            # history, whatever happens next (a kill). Text needs no such wait: it was shown
            # as it streamed, and what is stored of it is what was shown, or a start of it.
            await self.settle_writes()
            self.emit(
                ToolCallEvent(
                    session_id=self.session_id,
                    call_id=part.call_id,
                    tool=part.tool,
                    input=part.input,
                    title=part.title or part.tool,
                )
            )

    def part_index(self, part: Part) -> int:
        """The part's place in the assistant message: by identity, as two parts may be equal
        (the same text twice), and each has its own row."""
        assert self.assistant is not None
        return next(i for i, p in enumerate(self.assistant.parts) if p is part)

    async def save_part(self, part: Part) -> None:
        assert self.assistant is not None
        await self.store.save_part(self.assistant.id, self.part_index(part), part)

    def save_part_behind(self, part: Part) -> None:
        """save_part with write_behind, of the part as it is now."""
        assert self.assistant is not None
        index = self.part_index(part)
        copy = part.model_copy(deep=True)
        self.write_behind(partial(self.store.save_part, self.assistant.id, index, copy))

    async def void_step(self) -> None:
        """A retry: whatever this step streamed is void; the history keeps no duplicate."""
        assert self.assistant is not None and self.folder is not None
        self.flush_deltas()  # what was shown before the retry, the retry event then voids
        await self.settle_writes()
        self.folder.reset()
        await self.store.clear_parts(self.assistant.id)

    def record_usage(self, begin: StepUsage | None, end: StepUsage | None) -> Usage:
        """The step's usage, set on the message and added to the turn's and the session's (in
        memory: step() stores it)."""
        assert self.assistant is not None
        return self.count_usage(reported_usage(self.model, begin, end))

    def count_usage(self, step: Usage) -> Usage:
        assert self.assistant is not None
        self.assistant.usage = step
        self.usage = self.usage.add(step)
        self.state.record.usage = self.state.record.usage.add(step)
        return step

    async def close_step_after_error(self, error: str | None = None) -> None:
        """The provider failed for good: keep what was finished and the text streamed so far
        (what the user saw, as after a cancel); drop a half-streamed tool call."""
        if self.assistant is None or self.folder is None:
            return
        if self.assistant.finish_reason is not None:  # a step that completed: not the failed one
            return
        self.flush_text()
        await self.settle_writes()
        self.assistant.error = error
        self.folder.drop_unfinished_tools()
        for part in self.assistant.parts:
            if isinstance(part, ToolPart) and not part.finished:
                part.status = "error"
                part.output = "Not run: the model request failed."
        # One transaction, so memory and disk agree: a reload sends the model what this
        # process would have sent (the unfinished text was never saved before).
        await self.store.replace_parts(self.assistant.id, list(self.assistant.parts))
        self.assistant.finish_reason = "error"
        await self.store_partial_usage(self.assistant)

    async def store_partial_usage(self, assistant: Message) -> None:
        """The message of a step that did not finish, stored with the usage the stream reported
        before it ended (outcome.py partial_usage), which counts into the turn's and session's."""
        assert self.folder is not None
        partial = partial_usage(self.model, assistant, self.folder)
        step = self.count_usage(partial) if partial is not None else None
        await self.store.update_message(assistant, session_usage=step)
        if step is not None:
            session = self.state.record
            self.emit(
                UsageEvent(
                    session_id=self.session_id,
                    step=step,
                    turn=self.usage,
                    session=session.usage,
                    subagents=session.subagent_usage,
                )
            )

    # ---- store faults -------------------------------------------------------------------

    async def fail_on_store(self, exc: StoreError) -> TurnResult:
        """A store write failed (a full disk, a read-only or damaged database): the turn ends with
        an error event saying so, after the text streamed so far (already shown). What was
        committed stays; the session in memory is read again from the store, so that it holds
        what the store does (its unfinished tool calls marked interrupted)."""
        self.flush_text()
        self.flush_deltas()
        if self.writes is not None:  # writes already started: their failure is this one
            await asyncio.wait([self.writes])
            self.writes = None
        message = exc.message
        log.error("session %s: %s", self.session_id, message)
        if self.assistant is not None:
            self.final_text = self.assistant.text()
            self.assistant.error = message
            self.assistant.finish_reason = "error"
            try:  # a small write may still fit; nothing is lost when it does not
                await self.store.update_message(self.assistant)
            except StoreError:
                pass
        try:
            messages = await self.store.load_messages(
                self.session_id, since_message_id=self.state.record.summary_message_id, repair=False
            )
        except (StoreError, KeyError):
            pass
        else:
            repair_interrupted(messages)
            self.state.messages = messages
            self.state.api = ApiHistory()
        self.emit(ErrorEvent(session_id=self.session_id, message=message))
        self.emit(
            TurnEnd(
                session_id=self.session_id, finish_reason="error", message_id=self.last_assistant_id
            )
        )
        return TurnResult(
            self.session_id, self.last_assistant_id, "error", self.final_text, self.usage, message
        )

    # ---- cancel -------------------------------------------------------------------------

    async def finish_cancelled(self) -> TurnResult:
        assistant = self.assistant
        if assistant is not None and self.folder is not None:
            self.flush_text()
            await self.settle_writes()
            self.folder.drop_unfinished_tools()
            for part in self.folder.unfinished():
                if isinstance(part, TextPart):
                    part.cancelled = True
            for part in assistant.parts:
                if isinstance(part, ToolPart) and not part.finished:
                    part.status = "cancelled"
                    part.output = CANCELLED_OUTPUT
                    publish_result(self.emit, self.session_id, part)
                elif isinstance(part, ToolPart) and part.status == "cancelled":
                    publish_result(self.emit, self.session_id, part)
            # One transaction: the list may have shrunk, and the streamed text must be kept.
            await self.store.replace_parts(assistant.id, list(assistant.parts))
            assistant.finish_reason = "cancelled"
            await self.store_partial_usage(assistant)
            self.final_text = assistant.text()
        self.emit(
            TurnEnd(
                session_id=self.session_id,
                finish_reason="cancelled",
                message_id=self.last_assistant_id,
            )
        )
        return TurnResult(
            self.session_id, self.last_assistant_id, "cancelled", self.final_text, self.usage
        )
