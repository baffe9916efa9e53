"""Compaction: when the context nears the model's window, summarize the older history.

Before each step the turn asks its Compactor whether the last step's context (input, cached or
not, plus output) passed `compactThreshold` of the context window. If so, the history is cut at
a message boundary so that about `compactKeepRecentTokens` of recent messages stay as they are;
everything before the cut is written out as a plain-text transcript and summarized by the same
model in a dedicated request (its own system prompt, no tools, no cache breakpoints). The
summary becomes a user message holding a `summary` part, stored just before the first kept
message, and the session's summary_message_id points at it: from then on, in memory and on
every later load, the model sees summary + recent messages.

Tool calls and their results live in the same assistant message, so a cut at any message
boundary keeps every tool_use with its tool_result, and the summary (a user message) makes the
history start with a user message whatever follows it. A compaction that fails (the request
fails, or the summary is empty) leaves the session exactly as it was, and is not tried again in
the same turn.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from agentls.events import CompactionEvent, UsageEvent
from agentls.history import (
    ContextPart,
    Message,
    SummaryPart,
    TextPart,
    ToolPart,
    Usage,
    new_id,
    now_ms,
    to_api_messages,
)
from agentls.model.base import (
    MessageBegin,
    MessageEnd,
    ModelRequest,
    Provider,
    ProviderError,
    RetryNotice,
    TextDelta,
)
from agentls.model.catalog import model_info, price
from agentls.session.policy import Policy
from agentls.session.state import SessionState
from agentls.store import Store

log = logging.getLogger(__name__)

SUMMARY_MAX_TOKENS = 8_000
# Long tool outputs and inputs are shortened in the transcript: the summary needs their gist.
TRANSCRIPT_OUTPUT_CHARS = 3_000
TRANSCRIPT_INPUT_CHARS = 1_500

COMPACTION_SYSTEM_PROMPT = """You summarize a coding agent's session so that the agent can \
continue it with only your summary and the most recent messages.

The agent (agentls) works in the user's workspace with tools: it reads, searches and edits \
files, runs commands, and may use language servers, sub-agents and other tools. You receive the older part of the session as a transcript. Write a summary that \
lets the agent carry on without asking the user again. Include:
1. The user's requests and intent, in order; quote exact instructions and constraints.
2. What was done: files read, created or changed (with paths), commands run and their outcome.
3. Important facts learned: code structure, names, errors and how they were resolved.
4. Decisions made and the reasons, including what the user accepted or rejected.
5. The current state: what is finished, what is in progress, and the next steps.

Be specific and factual; keep file paths, function names and error messages exact. Do not \
invent anything that is not in the transcript. Write the summary only, no preamble."""

COMPACTION_INSTRUCTION = (
    "Summarize the session transcript above as instructed. The agent will continue from your "
    "summary plus the messages that came after this transcript."
)


def step_context_tokens(usage: Usage) -> int:
    """How much context a step used: what it read (cached or not) plus what it wrote."""
    return (
        usage.input_tokens
        + usage.cache_read_tokens
        + usage.cache_write_tokens
        + usage.output_tokens
    )


def context_tokens(messages: list[Message]) -> int | None:
    """The context the newest step measured, or None when unknown (no step since the last
    compaction: the usage recorded before it measured the uncompacted history)."""
    stale: str | None = None
    if messages:
        summary = messages[0].summary()
        if summary is not None:
            stale = summary.last_message_id
    for message in reversed(messages):
        if stale is not None and message.id == stale:
            return None
        if message.reverted:  # a step agent/revert dropped: no longer what is sent
            continue
        if message.role == "assistant" and message.usage is not None:
            tokens = step_context_tokens(message.usage)
            if tokens > 0:
                return tokens
    return None


def estimate_tokens(message: Message) -> int:
    """A rough size of the message as sent (characters / 4), tool results included."""
    payload = json.dumps(to_api_messages([message]), ensure_ascii=False)
    return len(payload) // 4


def choose_cut(messages: list[Message], keep_tokens: int) -> int | None:
    """Where to cut: the index of the first message kept. At least the newest message is kept,
    and as many before it as fit in keep_tokens. None when there is nothing to summarize."""
    if len(messages) < 2:
        return None
    cut = len(messages) - 1
    kept = estimate_tokens(messages[cut])
    for index in range(cut - 1, 0, -1):
        size = estimate_tokens(messages[index])
        if kept + size > keep_tokens:
            break
        kept += size
        cut = index
    older = messages[:cut]
    if not any(m.summary() is None and not m.reverted for m in older):
        return None
    return cut


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    return f"{head}\n[... {len(text) - len(head) - len(tail)} characters left out ...]\n{tail}"


def transcript(messages: list[Message]) -> str:
    """The messages as plain text for the summarizer (thinking left out, long outputs cut)."""
    lines: list[str] = []
    for message in messages:
        if message.reverted:
            continue
        for part in message.parts:
            if isinstance(part, SummaryPart):
                lines.append(f"[summary of the session before this point]\n{part.text}")
            elif isinstance(part, TextPart):
                if part.text.strip():
                    lines.append(f"[{message.role}]\n{part.text.strip()}")
            elif isinstance(part, ContextPart):
                body = _shorten(part.text or "", TRANSCRIPT_OUTPUT_CHARS)
                lines.append(f"[user attached {part.uri}]\n{body}")
            elif isinstance(part, ToolPart):
                raw_input = json.dumps(part.input, ensure_ascii=False)
                lines.append(
                    f"[assistant called {part.tool}] {_shorten(raw_input, TRANSCRIPT_INPUT_CHARS)}"
                )
                status = "" if part.status == "completed" else f" ({part.status})"
                output = _shorten(part.output or "(no output)", TRANSCRIPT_OUTPUT_CHARS)
                lines.append(f"[{part.tool} result{status}]\n{output}")
    return "\n\n".join(lines)


class CompactionFailed(Exception):
    pass


class Compactor:
    """Compaction for one turn: checked before each step, tried at most once if it fails.

    It works on the turn's session (state), with its model's provider, the store and the policy
    (the settings in force); `emit` sends its events, and `add_usage` adds what the summary
    cost to the turn's usage and returns the turn's total."""

    def __init__(
        self,
        *,
        state: SessionState,
        model: str,
        provider: Provider,
        store: Store,
        policy: Policy,
        emit: Callable[[Any], None],
        add_usage: Callable[[Usage], Usage],
    ) -> None:
        self.state = state
        self.model = model
        self.provider = provider
        self.store = store
        self.policy = policy
        self.emit = emit
        self.add_usage = add_usage
        self.failed = False

    @property
    def session_id(self) -> str:
        return self.state.record.id

    def context_window(self) -> int:
        settings = self.policy.settings
        return settings.context_window or model_info(self.model).context_window

    def needed(self) -> int | None:
        """The context size that calls for a compaction now, else None."""
        settings = self.policy.settings
        if not settings.auto_compact or self.failed:
            return None
        tokens = context_tokens(self.state.messages)
        if tokens is None or tokens <= settings.compact_threshold * self.context_window():
            return None
        return tokens

    async def maybe_compact(self) -> bool:
        tokens = self.needed()
        if tokens is None:
            return False
        return await self.compact(tokens)

    async def compact(self, tokens: int) -> bool:
        """Summarize the older history; True when the session now starts from a summary."""
        state = self.state
        window = self.context_window()
        keep = min(self.policy.settings.compact_keep_recent_tokens, window // 4)
        messages = list(state.messages)
        cut = choose_cut(messages, keep)
        if cut is None:
            return False
        self.emit(
            CompactionEvent(
                session_id=self.session_id,
                status="started",
                context_tokens=tokens,
                context_window=window,
            )
        )
        try:
            text, usage = await self._summarize(messages[:cut])
        except (ProviderError, CompactionFailed) as exc:
            return self._fail(str(exc), tokens, window)
        except Exception as exc:  # a bug here must not end the turn
            log.exception("compaction failed")
            return self._fail(f"{exc.__class__.__name__}: {exc}", tokens, window)
        summary = Message(
            id=new_id("msg"),
            session_id=self.session_id,
            role="user",
            created_at=now_ms(),
            parts=[
                SummaryPart(text=text, summarized_messages=cut, last_message_id=messages[-1].id)
            ],
            usage=usage,
        )
        try:
            await self._start_from(summary, messages[cut:])
        except Exception as exc:
            log.exception("cannot store the compaction summary")
            return self._fail(f"cannot store the summary: {exc}", tokens, window)
        self.emit(
            CompactionEvent(
                session_id=self.session_id,
                status="done",
                context_tokens=tokens,
                context_window=window,
                summary_message_id=summary.id,
                summarized_messages=cut,
            )
        )
        return True

    async def _start_from(self, summary: Message, kept: list[Message]) -> None:
        """Store the summary before the kept messages, then start the session from it."""
        state = self.state

        def switch() -> None:
            state.messages = [summary, *kept]
            state.record.summary_message_id = summary.id

        # One transaction, shielded: if the turn is cancelled meanwhile, the memory still
        # follows what the store committed.
        persist = asyncio.ensure_future(
            self.store.add_summary(summary, before_message_id=kept[0].id)
        )

        def on_done(task: asyncio.Future[None]) -> None:
            if not task.cancelled() and task.exception() is None:
                switch()

        try:
            await asyncio.shield(persist)
        except asyncio.CancelledError:
            if persist.done():
                on_done(persist)
            else:
                persist.add_done_callback(on_done)
            raise
        switch()

    def _fail(self, error: str, tokens: int, window: int) -> bool:
        self.failed = True
        log.warning("compaction failed: %s", error)
        self.emit(
            CompactionEvent(
                session_id=self.session_id,
                status="failed",
                context_tokens=tokens,
                context_window=window,
                error=error,
            )
        )
        return False

    async def _summarize(self, older: list[Message]) -> tuple[str, Usage]:
        body = transcript(older)
        if not body.strip():
            raise CompactionFailed("nothing to summarize")
        info = model_info(self.model)
        request = ModelRequest(
            model=self.model,
            system=[{"type": "text", "text": COMPACTION_SYSTEM_PROMPT}],
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": f"<transcript>\n{body}\n</transcript>\n\n"
                            + COMPACTION_INSTRUCTION,
                        }
                    ],
                }
            ],
            tools=[],
            max_tokens=min(SUMMARY_MAX_TOKENS, info.max_output),
            cache=False,
        )
        pieces: dict[int, list[str]] = {}
        begin: Any = None
        end: Any = None
        async for event in self.provider.stream(request):
            if isinstance(event, TextDelta):
                pieces.setdefault(event.index, []).append(event.text)
            elif isinstance(event, RetryNotice):
                pieces.clear()
            elif isinstance(event, MessageBegin):
                begin = event.usage
            elif isinstance(event, MessageEnd):
                end = event.usage
        usage = await self._record_usage(begin, end)  # spent whether or not it is usable
        text = "\n\n".join("".join(pieces[i]) for i in sorted(pieces)).strip()
        if not text:
            raise CompactionFailed("the model returned an empty summary")
        return text, usage

    async def _record_usage(self, begin: Any, end: Any) -> Usage:
        def pick(name: str) -> int:
            value = getattr(end, name, 0) if end is not None else 0
            return int(value or (getattr(begin, name, 0) if begin is not None else 0) or 0)

        usage = Usage(
            input_tokens=pick("input_tokens"),
            output_tokens=pick("output_tokens"),
            cache_read_tokens=pick("cache_read_tokens"),
            cache_write_tokens=pick("cache_write_tokens"),
        )
        usage.cost_usd = price(self.model, usage)
        turn_usage = self.add_usage(usage)
        state = self.state
        state.record.usage = state.record.usage.add(usage)
        await self.store.add_session_usage(self.session_id, usage)
        self.emit(
            UsageEvent(
                session_id=self.session_id, step=usage, turn=turn_usage, session=state.record.usage
            )
        )
        return usage
