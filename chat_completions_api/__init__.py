"""A local test double for the OpenAI Chat Completions API (``POST /v1/chat/completions``), what
Ollama, LM Studio, vLLM and OpenRouter serve; for the tests, not part of the agentls package.

The real ``openai`` SDK works against it unchanged::

    from chat_completions_api import ChatCompletionsServer, reply, tool_call

    with ChatCompletionsServer() as srv:
        srv.enqueue(reply("Let me look.", tool_call("read", {"path": "a.py"})))
        srv.enqueue(reply("Done.", reasoning="The file is fine."))
        client = AsyncOpenAI(base_url=srv.url, api_key="x", max_retries=0)
        ...
        srv.requests[0].body["messages"]  # what the agent sent

Replies are consumed first in, first out, one per accepted request; a queued item is a
:class:`Reply`, an :class:`ErrorReply` (``error(429, "...", retry_after="1")``), a ``str``, or
a callable of the request body. Streams cut each tool call's arguments into fragments sent by
index, interleaved with the other calls', and end with the usage chunk when the request asks for
it (``stream_options.include_usage``). Requests are validated as the real APIs do
(:mod:`chat_completions_api.validation`): among others a tool message without its call and a
call without its result are 400s. ``ChatCompletionsServer(strict=True)`` is the strictest dialect
users meet (llama-cpp-python's): a null assistant ``content`` is an HTTP 500 validation error, and
no usage chunk comes. Stdlib only.
"""

from chat_completions_api.replies import (
    ErrorReply,
    Reply,
    ReplyLike,
    ToolCall,
    error,
    reply,
    tool_call,
)
from chat_completions_api.server import ChatCompletionsServer, RecordedRequest, chunks
from chat_completions_api.validation import strict_problem, validate_request

__all__ = [
    "ChatCompletionsServer",
    "ErrorReply",
    "RecordedRequest",
    "Reply",
    "ReplyLike",
    "ToolCall",
    "chunks",
    "error",
    "reply",
    "strict_problem",
    "tool_call",
    "validate_request",
]
