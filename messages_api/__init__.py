"""A local test double for Anthropic's Messages API (``POST /v1/messages``), for the tests and the
benchmarks; it is not part of the agentls package.

The real ``anthropic`` SDK works against it unchanged::

    from messages_api import MessagesAPIServer, reply, text, tool_use

    with MessagesAPIServer() as srv:
        srv.enqueue(reply(text("Let me look."), tool_use("read", {"path": "a.py"})))
        srv.enqueue(reply(text("Done.")))
        client = AsyncAnthropic(base_url=srv.url, api_key="test", max_retries=0)
        ...
        srv.requests[0].body["messages"]  # what the agent sent

Replies are consumed FIFO, one per *accepted* ``POST /v1/messages`` (requests rejected by
validation or auth do not consume a reply).  When the queue is empty the server answers
``default`` (constructor argument), which itself defaults to an ``end_turn`` reply with the
text ``"(no scripted reply)"``.  A queued item may be

* a :class:`Reply` (``reply(...)``, ``cut_after(...)``, ``stream_error(...)``,
  ``malformed_sse(...)``, ``connection_reset()``),
* an :class:`ErrorReply` (``error(...)``): an HTTP error in the real API's JSON shape,
* a ``str`` (shorthand for ``reply(text(s))``),
* a callable ``(request_body: dict) -> Reply | ErrorReply | str`` evaluated per request.

Streams (``"stream": true``) are sent as SSE; event positions used by ``cut_after``,
``hold_after``, ``error_after`` and ``garbage_after`` count the events of
:func:`messages_api.sse.sse_frames` from 0.

Subprocess mode (for pointing a separately launched CLI at it), from the repository root::

    python -m messages_api --port 0 --script replies.json [--record log.jsonl]

prints ``READY http://127.0.0.1:PORT`` once listening and serves until SIGTERM/SIGINT.  The
script file is either a JSON list of replies or ``{"replies": [...], "default": reply}``;
see :func:`reply_from_json` for the format and :func:`write_script` to produce one.  Control
endpoints for the test process (not recorded, any mode): ``POST /_test/enqueue`` (a reply JSON
or a list of them), ``GET|POST /_test/release`` (release stalled ``hold`` streams),
``GET /_test/requests`` (recorded requests as JSON; ``received_at`` says, as ``time.time()``,
when a request's headers had been read, and a stream's ``first_byte_at``, ``resumed_at`` and
``finished_at`` when its first byte was written, when it went on after a hold and when its last
byte was, for latency measurements such as bench/stream.py's and bench/first_token.py's) and ``POST /_test/clear`` (forget
recorded requests and queued replies, e.g. between the rounds of a benchmark).

Validation (:mod:`messages_api.validation`, one function per API rule) also requires the
``anthropic-version`` header (the SDK always sends it).

Prompt caching (:mod:`messages_api.caching`): :func:`cache_prefixes` gives the bytes the cache
keys on at each ``cache_control`` breakpoint and :func:`cache_prefix_problem` says why a request
would not read the cache the previous request wrote.  With
``MessagesAPIServer(simulate_cache=True)`` the usage reports cache reads and writes.

The package is stdlib-only.  Modules: replies (the reply model and its builders), scripts
(replies as JSON, script files), validation (the API's request rules), sse (Message JSON and SSE
frames), caching (prompt-cache prefixes and their simulation), server (the HTTP server).
"""

from messages_api.caching import PromptCache, cache_prefix_problem, cache_prefixes
from messages_api.replies import (
    BROKEN_SSE_FRAME,
    Block,
    ErrorReply,
    RedactedThinking,
    Reply,
    ReplyLike,
    ReplySpec,
    Text,
    Thinking,
    ToolUse,
    connection_reset,
    cut_after,
    error,
    malformed_sse,
    new_tool_use_id,
    redacted_thinking,
    reply,
    stream_error,
    text,
    thinking,
    tool_use,
)
from messages_api.scripts import load_script, reply_from_json, reply_to_json, write_script
from messages_api.server import MessagesAPIServer, RecordedRequest
from messages_api.sse import estimate_input_tokens, render_message, sse_frames
from messages_api.validation import validate_request

__all__ = [
    "BROKEN_SSE_FRAME",
    "Block",
    "ErrorReply",
    "MessagesAPIServer",
    "PromptCache",
    "RecordedRequest",
    "RedactedThinking",
    "Reply",
    "ReplyLike",
    "ReplySpec",
    "Text",
    "Thinking",
    "ToolUse",
    "cache_prefix_problem",
    "cache_prefixes",
    "connection_reset",
    "cut_after",
    "error",
    "estimate_input_tokens",
    "load_script",
    "malformed_sse",
    "new_tool_use_id",
    "redacted_thinking",
    "render_message",
    "reply",
    "reply_from_json",
    "reply_to_json",
    "sse_frames",
    "stream_error",
    "text",
    "thinking",
    "tool_use",
    "validate_request",
    "write_script",
]
