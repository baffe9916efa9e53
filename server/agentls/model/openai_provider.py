"""OpenAI-compatible Chat Completions through the `openai` SDK (`base_url`): Ollama, LM Studio,
vLLM, llama.cpp, OpenRouter. The request is converted by openai_format.py; the stream comes back
as the same events the Anthropic provider yields, so the turn, compaction, retries, cancel and
the doom loop work unchanged:

- `reasoning_content` (or `reasoning`) deltas: a thinking block; `content` deltas: a text block;
- `tool_calls` deltas: assembled by their index (the id and name come first, the arguments in
  fragments), each a tool_use block once the stream has ended;
- finish_reason stop / length / tool_calls: end_turn / max_tokens / tool_use;
- usage from the last chunk (`stream_options.include_usage`): prompt tokens less the cached
  ones, completion tokens, cached tokens as cache reads; a server that sends none (llama-cpp-
  python ignores the option) gets an estimate (CHARS_PER_TOKEN), marked estimated;
- a status error the server will give again (a 4xx, or a 5xx whose body is a validation error,
  as llama-cpp-python answers a request its types refuse) is not retried: one sentence names
  the server and what it refused.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agentls.environ_scrub import credential
from agentls.history import new_id
from agentls.model.base import (
    BlockStart,
    BlockStop,
    MessageBegin,
    MessageEnd,
    ModelRequest,
    ProviderError,
    StepUsage,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)
from agentls.model.fit import fit_request
from agentls.model.openai_format import chat_messages, chat_tools
from agentls.model.providers import api_model_of
from agentls.model.retrying import (
    Failure,
    RetryPolicy,
    StreamBroken,
    broken,
    error_object,
    retried,
    sdk_failure,
)

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
# Sent as the key to a server that takes none (Ollama, LM Studio): the SDK wants one, and it must
# never fall back to OPENAI_API_KEY, which would send the user's OpenAI key to this server.
NO_KEY = "no-key"
# The estimate of a server that reports no usage (as the turn estimates a stopped step's output).
CHARS_PER_TOKEN = 4
# A 5xx whose body says these is the server's validation refusing the request: sent again, the
# same request is refused again.
_INVALID = re.compile(
    r"validation error|input should be|field required|invalid request|invalid_request|"
    r"unprocessable|extra inputs are not permitted",
    re.IGNORECASE,
)


@dataclass
class _Call:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


def _usage(raw: dict[str, Any]) -> StepUsage:
    prompt = int(raw.get("prompt_tokens") or 0)
    details = raw.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    return StepUsage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_tokens=cached,
    )


class OpenAIProvider:
    """Streams one Chat Completions reply per call; the SDK's own retries are off."""

    def __init__(
        self,
        *,
        name: str = "local",
        base_url: str,
        api_key: str | None = None,
        api_key_env: str | None = None,
        max_attempts: int = 5,
        base_delay_s: float = 1.0,
        max_delay_s: float = 60.0,
        timeout_s: float = 600.0,
    ) -> None:
        self.name = name
        self.base_url = base_url
        self._api_key = api_key
        self.api_key_env = api_key_env
        self.policy = RetryPolicy(max_attempts, base_delay_s, max_delay_s, timeout_s)
        self._client: Any = None

    def client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            key = self._api_key
            if key is None and self.api_key_env:
                key = credential(self.api_key_env)
                if not key:
                    raise ProviderError(
                        f"No API key for provider {self.name!r}: set {self.api_key_env}.",
                        kind="auth",
                    )
            self._client = AsyncOpenAI(
                api_key=key or NO_KEY,
                base_url=self.base_url,
                max_retries=0,
                timeout=self.policy.timeout_s,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self._client is None:
            await asyncio.to_thread(self.client)  # the SDK's import, off the event loop
        import openai

        request = fit_request(request)

        def failure(exc: BaseException) -> Failure | None:
            if isinstance(exc, _ErrorInStream):
                return Failure(f"error in the stream: {exc}", True, "overloaded")
            found = sdk_failure(exc, openai, self.policy.timeout_s)
            if found is not None and isinstance(exc, openai.APIStatusError):
                return self._refused(exc, found)
            return found

        async for event in retried(self.policy, lambda: self._stream_once(request), failure):
            yield event

    def _refused(self, exc: Any, found: Failure) -> Failure:
        """A request the server refuses as it is: not retried, said in one sentence."""
        status = int(exc.status_code)
        err = error_object(exc) or {}
        text = str(err.get("message") or getattr(exc, "message", "") or "")
        invalid = _INVALID.search(f"{text} {err.get('type') or ''}") is not None
        if not (400 <= status < 500 and not found.retryable) and not (status >= 500 and invalid):
            return found
        kind = found.kind if found.kind in ("auth", "context_too_long") else "bad_request"
        reason = (
            f"the {self.name} provider's server ({self.base_url}) refused the request "
            f"(HTTP {status}): {one_sentence(text) or 'no reason given'}"
        )
        return Failure(reason, False, kind, status)

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": api_model_of(request.model, self.name),
            "messages": chat_messages(request.system, request.messages),
            "max_tokens": request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = chat_tools(request.tools)
        return body

    async def _stream_once(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        import openai

        # The raw stream, read as JSON: the SDK's typed chunks cost most of the CPU time of a
        # stream (a pydantic model per chunk), and these few fields need no model.
        responses = self.client().chat.completions.with_streaming_response
        body = self._body(request)
        prompt_chars = len(json.dumps([body["messages"], body.get("tools")], ensure_ascii=False))
        state = _Fold(prompt_chars)
        try:
            async with responses.create(**body) as response:
                async for chunk in _sse_json(response.iter_lines()):
                    for event in state.fold(chunk):
                        yield event
        except (openai.APIError, _ErrorInStream):
            raise
        except Exception as exc:  # httpx errors mid-stream: the connection broke
            raise broken(exc, self.policy.timeout_s) from exc
        for event in state.end():
            yield event


def one_sentence(text: str) -> str:
    """A server's error text in one line: pydantic's "N validation errors for X / loc / msg
    [type=...]" (and FastAPI's list of dicts) as "loc: msg", whitespace collapsed, bounded."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("For further information")]
    head = re.match(r"(\d+) validation errors? for", lines[0]) if lines else None
    if head and len(lines) >= 3:
        said = f"{lines[1]}: " + re.sub(r"\s*\[type=.*$", "", lines[2])
        more = int(head.group(1)) - 1
        return said + (f" (and {more} more)" if more > 0 else "")
    loc = re.search(r"'loc': \(([^)]*)\)", text)
    msg = re.search(r"'msg': '([^']*)'", text)
    if loc and msg:
        where = ".".join(p.strip(" '") for p in loc.group(1).split(",") if p.strip())
        return f"{where}: {msg.group(1)}"
    said = " ".join(lines)
    return said if len(said) <= 300 else said[:299] + "…"


# What a tool call id may hold for the Messages API (a session may switch to Claude later).
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


class _ErrorInStream(Exception):
    """An error object in the middle of the stream (the server gave up after the 200)."""


async def _sse_json(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of an SSE stream's `data:` fields, until `[DONE]`."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
            continue
        if line or not data:
            continue  # event:, id:, comments; or a blank line with nothing pending
        payload, data = "\n".join(data), []
        if payload.strip() == "[DONE]":
            return
        try:
            chunk = json.loads(payload)
        except ValueError as exc:
            raise StreamBroken(f"stream broken: a chunk is not JSON ({exc})") from exc
        if isinstance(chunk, dict) and chunk.get("error"):
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else str(error)
            raise _ErrorInStream(str(message or "an error in the stream"))
        if isinstance(chunk, dict):
            yield chunk


class _Fold:
    """Chat Completions chunks (dicts) folded into the provider events."""

    def __init__(self, prompt_chars: int = 0) -> None:
        self.prompt_chars = prompt_chars
        self.streamed_chars = 0
        self.reported = False
        self.next_index = 0
        self.open_kind: str | None = None  # the text or thinking block streaming now
        self.calls: dict[int, _Call] = {}
        self.finish: str | None = None
        self.usage = StepUsage()
        self.began = False

    def fold(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if not self.began:
            self.began = True
            out.append(MessageBegin(str(chunk.get("id") or new_id("chatcmpl"))))
        if chunk.get("usage"):
            self.usage = _usage(chunk["usage"])
            self.reported = True
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            for kind, piece in (("thinking", reasoning), ("text", delta.get("content"))):
                if isinstance(piece, str) and piece:
                    self.streamed_chars += len(piece)
                    out.extend(self._text(kind, piece))
            for fragment in delta.get("tool_calls") or []:
                call = self.calls.setdefault(int(fragment.get("index") or 0), _Call())
                call.id = call.id or fragment.get("id")
                function = fragment.get("function") or {}
                call.name = call.name or function.get("name")
                if function.get("arguments"):
                    call.arguments.append(str(function["arguments"]))
                    self.streamed_chars += len(call.arguments[-1])
            if choice.get("finish_reason"):
                self.finish = str(choice["finish_reason"])
        return out

    def _text(self, kind: str, piece: str) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if self.open_kind != kind:
            if self.open_kind is not None:
                out.append(BlockStop(self.next_index - 1))
            self.open_kind = kind
            out.append(BlockStart(self.next_index, "thinking" if kind == "thinking" else "text"))
            self.next_index += 1
        index = self.next_index - 1
        out.append(ThinkingDelta(index, piece) if kind == "thinking" else TextDelta(index, piece))
        return out

    def end(self) -> list[StreamEvent]:
        if self.finish is None:
            raise StreamBroken("stream ended before the message was complete")
        out: list[StreamEvent] = []
        if self.open_kind is not None:
            out.append(BlockStop(self.next_index - 1))
        # A reply cut off by max_tokens may hold a half-written call: nothing to run, as with
        # Anthropic's unfinished tool_use blocks.
        cut = self.finish == "length"
        if not cut:
            for _, call in sorted(self.calls.items()):
                index = self.next_index
                # Kept in the history, which Claude may read later: its id rules.
                tool_id = _UNSAFE_ID.sub("_", call.id or "") or new_id("call")
                out.append(BlockStart(index, "tool_use", tool_id=tool_id, tool_name=call.name))
                out.append(ToolInputDelta(index, "".join(call.arguments)))
                out.append(BlockStop(index))
                self.next_index += 1
        stop = STOP_REASONS.get(self.finish, "end_turn")
        if self.calls and not cut:
            stop = "tool_use"  # some servers say "stop" after tool calls
        usage = self.usage
        if not self.reported:  # the server sent no usage: an estimate, marked so
            usage = StepUsage(
                input_tokens=-(-self.prompt_chars // CHARS_PER_TOKEN),
                output_tokens=-(-self.streamed_chars // CHARS_PER_TOKEN),
                estimated=True,
            )
        out.append(MessageEnd(stop, usage))
        return out
