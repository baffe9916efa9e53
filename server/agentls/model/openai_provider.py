"""OpenAI-compatible Chat Completions through the `openai` SDK (`base_url`): Ollama, LM Studio,
vLLM, llama.cpp, OpenRouter. The request is converted by openai_format.py; the stream comes back
as the same events the Anthropic provider yields, so the turn, compaction, retries, cancel and
the doom loop work unchanged:

- `reasoning_content` (or `reasoning`) deltas: a thinking block; `content` deltas: a text block;
- `tool_calls` deltas: assembled by their index (the id and name come first, the arguments in
  fragments), each a tool_use block once the stream has ended;
- finish_reason stop / length / tool_calls: end_turn / max_tokens / tool_use;
- usage from the last chunk (`stream_options.include_usage`): prompt tokens less the cached
  ones, completion tokens, cached tokens as cache reads.
"""

from __future__ import annotations

import asyncio
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


@dataclass
class _Call:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


def _usage(raw: Any) -> StepUsage:
    if raw is None:
        return StepUsage()
    prompt = int(getattr(raw, "prompt_tokens", 0) or 0)
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return StepUsage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=cached,
    )


def _reasoning(delta: Any) -> str | None:
    extra = getattr(delta, "model_extra", None) or {}
    value = extra.get("reasoning_content") or extra.get("reasoning")
    return value if isinstance(value, str) and value else None


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
                        f"No API key for provider {self.name!r}: set {self.api_key_env}."
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
            found = sdk_failure(exc, openai, self.policy.timeout_s)
            if found is None and isinstance(exc, openai.APIError):
                # An error object in the middle of the stream.
                return Failure(f"error in the stream: {exc.message}", True)
            return found

        async for event in retried(self.policy, lambda: self._stream_once(request), failure):
            yield event

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

        stream = await self.client().chat.completions.create(**self._body(request))
        next_index = 0
        open_kind: str | None = None  # the text or thinking block streaming now
        calls: dict[int, _Call] = {}
        finish: str | None = None
        usage = StepUsage()
        began = False
        try:
            async for chunk in stream:
                if not began:
                    began = True
                    yield MessageBegin(chunk.id or new_id("chatcmpl"))
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    delta = choice.delta
                    pieces = [("thinking", _reasoning(delta)), ("text", delta.content)]
                    for kind, piece in pieces:
                        if not piece:
                            continue
                        if open_kind != kind:
                            if open_kind is not None:
                                yield BlockStop(next_index - 1)
                            open_kind = kind
                            yield BlockStart(
                                next_index, "thinking" if kind == "thinking" else "text"
                            )
                            next_index += 1
                        index = next_index - 1
                        yield (
                            ThinkingDelta(index, piece)
                            if kind == "thinking"
                            else TextDelta(index, piece)
                        )
                    for fragment in delta.tool_calls or []:
                        call = calls.setdefault(fragment.index, _Call())
                        call.id = call.id or fragment.id
                        if fragment.function is not None:
                            call.name = call.name or fragment.function.name
                            if fragment.function.arguments:
                                call.arguments.append(fragment.function.arguments)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except openai.APIError:
            raise
        except Exception as exc:  # httpx errors mid-stream: the connection broke
            raise broken(exc, self.policy.timeout_s) from exc
        finally:
            await stream.close()
        if finish is None:
            raise StreamBroken("stream ended before the message was complete")
        if open_kind is not None:
            yield BlockStop(next_index - 1)
        # A reply cut off by max_tokens may hold a half-written call: nothing to run, as with
        # Anthropic's unfinished tool_use blocks.
        if finish != "length":
            for _, call in sorted(calls.items()):
                yield BlockStart(
                    next_index, "tool_use", tool_id=call.id or new_id("call"), tool_name=call.name
                )
                yield ToolInputDelta(next_index, "".join(call.arguments))
                yield BlockStop(next_index)
                next_index += 1
        stop = STOP_REASONS.get(finish, "end_turn")
        if calls and finish != "length":
            stop = "tool_use"  # some servers say "stop" after tool calls
        yield MessageEnd(stop, usage)
