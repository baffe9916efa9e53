"""The request rules of the real Messages API: a request that breaks one is answered with the
400 ``invalid_request_error`` the real API sends, with its message.

Each rule is one function that raises :class:`Invalid`; :data:`RULES` runs them in order, so a
rule may rely on the ones before it (the shapes they checked).  The content blocks of a message
have one rule per block type (:data:`BLOCK_RULES`)."""

from __future__ import annotations

import base64
import binascii
import io
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PIL import Image, UnidentifiedImageError

TOOL_ID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ALLOWED_KEYS = frozenset(
    {
        "model", "messages", "max_tokens", "system", "tools", "tool_choice", "stream",
        "stop_sequences", "metadata", "thinking", "service_tier", "container", "cache_control",
        "diagnostics", "inference_geo", "output_config", "speed", "user_profile_id",
        "workspace_id", "temperature", "top_p", "top_k", "mcp_servers", "context_management",
    }
)  # fmt: skip
MAX_CACHE_CONTROL_BLOCKS = 4
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000


class Invalid(Exception):
    """A broken rule; the message is the real API's."""


@dataclass
class Request:
    """A request body under validation (``count_tokens``: ``POST /v1/messages/count_tokens``,
    which takes no ``max_tokens``)."""

    body: Any
    count_tokens: bool = False


# One content block: (message index, block index, block).
Item = tuple[int, int, dict[str, Any]]
# A turn: consecutive messages of one role, merged as the API merges them.
Turn = tuple[str, list[Item]]


# -- the request's fields ------------------------------------------------------------------


def body_is_an_object(req: Request) -> None:
    """The body is a JSON object."""
    if not isinstance(req.body, dict):
        raise Invalid("Request body must be a JSON object")


def required_fields(req: Request) -> None:
    """``model``, ``max_tokens`` (not for count_tokens) and ``messages`` are present."""
    required = ("model", "messages") if req.count_tokens else ("model", "max_tokens", "messages")
    for key in required:
        if key not in req.body:
            raise Invalid(f"{key}: Field required")


def no_extra_fields(req: Request) -> None:
    """No field the API does not know."""
    extra = sorted(set(req.body) - ALLOWED_KEYS - ({"max_tokens"} if req.count_tokens else set()))
    if extra:
        raise Invalid(f"{extra[0]}: Extra inputs are not permitted")


def model_is_a_string(req: Request) -> None:
    """``model`` is a non-empty string."""
    if not isinstance(req.body["model"], str) or not req.body["model"]:
        raise Invalid("model: Input should be a valid non-empty string")


def max_tokens_is_a_count(req: Request) -> None:
    """``max_tokens`` is an integer >= 0 (count_tokens: not checked)."""
    if req.count_tokens:
        return
    max_tokens = req.body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        raise Invalid("max_tokens: Input should be a valid integer")
    if max_tokens < 0:
        raise Invalid("max_tokens: Input should be greater than or equal to 0")


def stream_is_a_boolean(req: Request) -> None:
    """``stream``, when present, is a boolean."""
    if "stream" in req.body and not isinstance(req.body["stream"], bool):
        raise Invalid("stream: Input should be a valid boolean")


# -- tools ---------------------------------------------------------------------------------


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools") or [] if isinstance(t.get("name"), str)]


def tools_are_valid(req: Request) -> None:
    """``tools`` is a list of objects; a custom tool has a name matching ``^[a-zA-Z0-9_-]{1,64}$``
    and an ``input_schema`` of type object (server tools, with a versioned ``type``, only need a
    name)."""
    tools = req.body.get("tools")
    if tools is None:
        return
    if not isinstance(tools, list):
        raise Invalid("tools: Input should be a valid list")
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise Invalid(f"tools.{i}: Input should be a valid dictionary")
        if tool.get("type") not in (None, "custom"):
            continue
        name = tool.get("name")
        if not isinstance(name, str):
            raise Invalid(f"tools.{i}.custom.name: Field required")
        if not TOOL_NAME_RE.match(name):
            raise Invalid(
                f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise Invalid(f"tools.{i}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise Invalid(f"tools.{i}.custom.input_schema.type: Input should be 'object'")


def tool_names_are_unique(req: Request) -> None:
    """No two tools share a name."""
    names = _tool_names(req.body)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise Invalid(f"tools: Tool names must be unique. Duplicate: {dup!r}")


def tool_choice_is_valid(req: Request) -> None:
    """``tool_choice`` is auto, any, tool or none; all but none need tools, and ``tool`` names one
    of them."""
    choice = req.body.get("tool_choice")
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        raise Invalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if choice["type"] != "none" and not req.body.get("tools"):
        raise Invalid("tool_choice may only be specified while providing tools")
    if choice["type"] == "tool" and choice.get("name") not in _tool_names(req.body):
        raise Invalid(f"tool_choice.tool.name: no tool named {choice.get('name')!r} in tools")


# -- thinking and system -------------------------------------------------------------------

EFFORTS = ("low", "medium", "high", "xhigh", "max")


def output_config_is_valid(req: Request) -> None:
    """``output_config`` is an object; its ``effort``, when given, one of the five levels."""
    config = req.body.get("output_config")
    if config is None:
        return
    if not isinstance(config, dict):
        raise Invalid("output_config: Input should be a valid dictionary")
    effort = config.get("effort")
    if effort is not None and effort not in EFFORTS:
        raise Invalid(
            "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
        )


def _thinking_enabled(body: dict[str, Any]) -> bool:
    think = body.get("thinking")
    return isinstance(think, dict) and think.get("type") == "enabled"


def thinking_is_valid(req: Request) -> None:
    """``thinking`` is enabled, disabled or adaptive; enabled thinking has a ``budget_tokens`` of at
    least 1024, below ``max_tokens``, and does not go with a tool_choice that forces tool use."""
    think = req.body.get("thinking")
    if think is None:
        return
    if not isinstance(think, dict) or think.get("type") not in ("enabled", "disabled", "adaptive"):
        raise Invalid("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
    if think["type"] != "enabled":
        return
    budget = think.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        raise Invalid(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        )
    max_tokens = req.body.get("max_tokens")
    if not req.count_tokens and isinstance(max_tokens, int) and max_tokens <= budget:
        raise Invalid("max_tokens must be greater than thinking.budget_tokens")
    choice = req.body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        raise Invalid("Thinking may not be enabled when tool_choice forces tool use.")


def _check_text(b: dict[str, Any], where: str) -> None:
    t = b.get("text")
    if not isinstance(t, str):
        raise Invalid(f"{where}.text: Field required")
    if t == "":
        raise Invalid(f"{where}.text: text content blocks must be non-empty")
    if not t.strip():
        raise Invalid(f"{where}.text: text content blocks must contain non-whitespace text")


def system_is_text(req: Request) -> None:
    """``system`` is a string or a list of non-blank text blocks."""
    system = req.body.get("system")
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise Invalid("system: Input should be a valid string or list of text blocks")
    for j, b in enumerate(system):
        if not isinstance(b, dict) or b.get("type") != "text":
            raise Invalid(f"system.{j}.type: Input should be 'text'")
        _check_text(b, f"system.{j}")


# -- content blocks ------------------------------------------------------------------------


def text_block(b: dict[str, Any], role: str, where: str) -> None:
    """A text block has a non-empty, non-blank ``text``."""
    _check_text(b, where)


def tool_use_block(b: dict[str, Any], role: str, where: str) -> None:
    """A tool_use block is the assistant's, with an id matching ``^[a-zA-Z0-9_-]+$``, a name and
    an object input."""
    if role != "assistant":
        raise Invalid(f"{where}: `tool_use` blocks are only allowed in assistant messages")
    tid = b.get("id")
    if not isinstance(tid, str):
        raise Invalid(f"{where}.tool_use.id: Field required")
    if not TOOL_ID_RE.match(tid):
        raise Invalid(f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'")
    if not isinstance(b.get("name"), str) or not b["name"]:
        raise Invalid(f"{where}.tool_use.name: Field required")
    if not isinstance(b.get("input"), dict):
        raise Invalid(f"{where}.tool_use.input: Input should be a valid dictionary")


def tool_result_block(b: dict[str, Any], role: str, where: str) -> None:
    """A tool_result block is the user's, with a ``tool_use_id`` matching ``^[a-zA-Z0-9_-]+$``, a
    boolean ``is_error`` if any, and a string or a list of blocks (non-blank texts) as content."""
    if role != "user":
        raise Invalid(f"{where}: `tool_result` blocks are only allowed in user messages")
    tid = b.get("tool_use_id")
    if not isinstance(tid, str):
        raise Invalid(f"{where}.tool_result.tool_use_id: Field required")
    if not TOOL_ID_RE.match(tid):
        raise Invalid(
            f"{where}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        )
    if "is_error" in b and not isinstance(b["is_error"], bool):
        raise Invalid(f"{where}.tool_result.is_error: Input should be a valid boolean")
    inner = b.get("content")
    if isinstance(inner, list):
        for k, ib in enumerate(inner):
            iwhere = f"{where}.tool_result.content.{k}"
            if not isinstance(ib, dict) or not isinstance(ib.get("type"), str):
                raise Invalid(f"{iwhere}.type: Field required")
            if ib["type"] == "text":
                _check_text(ib, iwhere)
            elif ib["type"] == "image":
                image_block(ib, role, iwhere)
    elif inner is not None and not isinstance(inner, str):
        raise Invalid(f"{where}.tool_result.content: Input should be a valid string or list")


def thinking_block(b: dict[str, Any], role: str, where: str) -> None:
    """A thinking block is the assistant's, with its ``thinking`` and ``signature``."""
    if role != "assistant":
        raise Invalid(f"{where}: `thinking` blocks are only allowed in assistant messages")
    if not isinstance(b.get("thinking"), str):
        raise Invalid(f"{where}.thinking.thinking: Field required")
    if not isinstance(b.get("signature"), str):
        raise Invalid(f"{where}.thinking.signature: Field required")


def redacted_thinking_block(b: dict[str, Any], role: str, where: str) -> None:
    """A redacted_thinking block is the assistant's, with its ``data``."""
    if role != "assistant":
        raise Invalid(f"{where}: `redacted_thinking` blocks are only allowed in assistant messages")
    if not isinstance(b.get("data"), str):
        raise Invalid(f"{where}.redacted_thinking.data: Field required")


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _lenient_png(raw: bytes) -> bytes:
    """A PNG without its ancillary chunks whose CRC is wrong (libpng, and so browsers, skip them
    with a warning; Pillow refuses the file), else the bytes as they are."""
    if not raw.startswith(PNG_SIGNATURE):
        return raw
    out, pos = [raw[:8]], 8
    while pos + 12 <= len(raw):
        length = int.from_bytes(raw[pos : pos + 4], "big")
        end = pos + 12 + length
        kind = raw[pos + 4 : pos + 8]
        crc = int.from_bytes(raw[end - 4 : end], "big")
        if not (kind[:1].islower() and zlib.crc32(raw[pos + 4 : end - 4]) != crc):
            out.append(raw[pos:end])
        pos = end
    out.append(raw[pos:])
    return b"".join(out)


def _image_side(data: bytes) -> int | None:
    """The image's longest side, or None when it is no image Pillow can read."""
    try:
        with Image.open(io.BytesIO(_lenient_png(data))) as image:
            image.load()
            return max(image.size)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError):
        return None


def image_block(b: dict[str, Any], role: str, where: str) -> None:
    """An image block's source is base64 (one of the four media types, valid base64 of at most
    5 MB, a readable image of at most 8000 px a side) or a url."""
    source = b.get("source")
    if not isinstance(source, dict):
        raise Invalid(f"{where}.image.source: Field required")
    kind = source.get("type")
    if kind == "url":
        if not isinstance(source.get("url"), str):
            raise Invalid(f"{where}.image.source.url.url: Field required")
        return
    if kind != "base64":
        raise Invalid(f"{where}.image.source: Input tag '{kind}' found using 'type' does not "
                      "match any of the expected tags: 'base64', 'url'")  # fmt: skip
    here = f"{where}.image.source.base64"
    if source.get("media_type") not in IMAGE_MEDIA_TYPES:
        raise Invalid(f"{here}.media_type: Input should be 'image/jpeg', 'image/png', "
                      "'image/gif' or 'image/webp'")  # fmt: skip
    data = source.get("data")
    if not isinstance(data, str):
        raise Invalid(f"{here}.data: Field required")
    if len(data) > MAX_IMAGE_BASE64:
        raise Invalid(f"{here}: image exceeds 5 MB maximum: {len(data)} bytes > "
                      f"{MAX_IMAGE_BASE64} bytes")  # fmt: skip
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise Invalid(f"{here}.data: Invalid base64 data") from None
    side = _image_side(raw)
    if side is None:
        raise Invalid(f"{here}.data: Could not process image")
    if side > MAX_IMAGE_SIDE:
        raise Invalid(f"{here}.data: At least one of the image dimensions exceed max allowed "
                      f"size: {MAX_IMAGE_SIDE} pixels")  # fmt: skip


BLOCK_RULES: dict[str, Callable[[dict[str, Any], str, str], None]] = {
    "text": text_block,
    "tool_use": tool_use_block,
    "tool_result": tool_result_block,
    "thinking": thinking_block,
    "redacted_thinking": redacted_thinking_block,
    "image": image_block,
}


# -- messages ------------------------------------------------------------------------------


def messages_are_valid(req: Request) -> None:
    """``messages`` is a non-empty list that starts with the user; each message has a role (user
    or assistant) and non-empty content (only a final assistant message may be empty), a string
    or a list of typed blocks, each valid by its :data:`BLOCK_RULES`."""
    messages = req.body["messages"]
    if not isinstance(messages, list):
        raise Invalid("messages: Input should be a valid list")
    if not messages:
        raise Invalid("messages: at least one message is required")
    last = len(messages) - 1
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise Invalid(f"messages.{i}: Input should be a valid dictionary")
        if "role" not in m:
            raise Invalid(f"messages.{i}.role: Field required")
        role = m["role"]
        if role not in ("user", "assistant"):
            raise Invalid(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if i == 0 and role != "user":
            raise Invalid('messages: first message must use the "user" role')
        if "content" not in m:
            raise Invalid(f"messages.{i}.content: Field required")
        content = m["content"]
        final_assistant = i == last and role == "assistant"
        if not isinstance(content, str | list):
            raise Invalid(
                f"messages.{i}.content: Input should be a valid string or list of content blocks"
            )
        if not content:
            if final_assistant:
                continue
            raise Invalid(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        if isinstance(content, str):
            if not content.strip() and not final_assistant:
                raise Invalid(
                    f"messages.{i}.content: text content blocks must contain non-whitespace text"
                )
            continue
        for j, b in enumerate(content):
            where = f"messages.{i}.content.{j}"
            if not isinstance(b, dict) or not isinstance(b.get("type"), str):
                raise Invalid(f"{where}.type: Field required")
            rule = BLOCK_RULES.get(b["type"])
            if rule is not None:
                rule(b, role, where)


def final_assistant_text_is_trimmed(req: Request) -> None:
    """A final assistant message (a prefill) does not end with whitespace."""
    messages = req.body["messages"]
    final = messages[-1]
    if final["role"] != "assistant" or not final["content"]:
        return
    content = final["content"]
    tail = content if isinstance(content, str) else None
    if isinstance(content, list) and content[-1].get("type") == "text":
        tail = content[-1].get("text", "")
    if isinstance(tail, str) and tail != tail.rstrip():
        raise Invalid("messages: final assistant content cannot end with trailing whitespace")


def _turns(messages: list[dict[str, Any]]) -> list[Turn]:
    """Consecutive messages of one role merged, as the API reads them (an empty final assistant
    message is left out)."""
    turns: list[Turn] = []
    for i, m in enumerate(messages):
        content = m["content"]
        if not content:
            continue
        items: list[Item]
        if isinstance(content, str):
            items = [(i, 0, {"type": "text", "text": content})]
        else:
            items = [(i, j, b) for j, b in enumerate(content)]
        if turns and turns[-1][0] == m["role"]:
            turns[-1][1].extend(items)
        else:
            turns.append((m["role"], items))
    return turns


def tool_uses_are_answered(req: Request) -> None:
    """Every tool_use id is unique, and answered by a tool_result in the next (user) turn."""
    turns = _turns(req.body["messages"])
    seen: set[str] = set()
    for t, (role, items) in enumerate(turns):
        if role != "assistant":
            continue
        ids: list[str] = []
        for i, j, b in items:
            if b["type"] == "tool_use":
                if b["id"] in seen:
                    raise Invalid(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                seen.add(b["id"])
                ids.append(b["id"])
        if not ids:
            continue
        nxt = turns[t + 1][1] if t + 1 < len(turns) else []
        answered = {b.get("tool_use_id") for _, _, b in nxt if b["type"] == "tool_result"}
        missing = [x for x in ids if x not in answered]
        if missing:
            at = nxt[0][0] if nxt else items[-1][0]
            raise Invalid(
                f"messages.{at}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )


def tool_results_answer_the_turn_before(req: Request) -> None:
    """Each tool_result answers a tool_use of the assistant turn just before, once, and the
    results come first in their user turn."""
    turns = _turns(req.body["messages"])
    for t, (role, items) in enumerate(turns):
        if role != "user":
            continue
        asked: set[str] = set()
        if t > 0:
            asked = {b["id"] for _, _, b in turns[t - 1][1] if b["type"] == "tool_use"}
        answered: set[str] = set()
        other_seen = False
        for i, j, b in items:
            if b["type"] != "tool_result":
                other_seen = True
                continue
            tid = b["tool_use_id"]
            if tid not in asked:
                raise Invalid(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {tid}. Each `tool_result` block must have a corresponding "
                    "`tool_use` block in the previous message."
                )
            if tid in answered:
                raise Invalid(
                    f"messages.{i}.content.{j}: each `tool_use` must have a single result. "
                    f"Found multiple `tool_result` blocks with id: {tid}"
                )
            answered.add(tid)
            if other_seen:
                raise Invalid(
                    f"messages.{i}.content.{j}: `tool_result` blocks must come first in the "
                    "user message content, before any other content blocks"
                )


def thinking_leads_the_tool_use_turn(req: Request) -> None:
    """With thinking enabled, when the last user turn carries tool results, the assistant turn
    before it starts with a thinking or redacted_thinking block."""
    if not _thinking_enabled(req.body):
        return
    turns = _turns(req.body["messages"])
    if len(turns) < 2 or turns[-1][0] != "user":
        return
    prev_role, prev_items = turns[-2]
    if prev_role != "assistant" or not any(b["type"] == "tool_result" for _, _, b in turns[-1][1]):
        return
    first = prev_items[0][2]["type"] if prev_items else "nothing"
    if first not in ("thinking", "redacted_thinking"):
        at = prev_items[0][0] if prev_items else 0
        raise Invalid(
            f"messages.{at}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
            f"found `{first}`. When `thinking` is enabled, a final `assistant` message must "
            "start with a thinking block (preceding the lastmost set of `tool_use` and "
            "`tool_result` blocks). To avoid this requirement, disable `thinking`."
        )


# -- prompt caching ------------------------------------------------------------------------


def _cache_controlled(blocks: Any) -> int:
    if not isinstance(blocks, list):
        return 0
    return sum(isinstance(b, dict) and b.get("cache_control") is not None for b in blocks)


def at_most_four_cache_breakpoints(req: Request) -> None:
    """At most four blocks carry ``cache_control`` (the request's own, tools, system blocks,
    content blocks and the blocks inside tool results)."""
    body = req.body
    n = 1 if body.get("cache_control") is not None else 0
    n += _cache_controlled(body.get("tools"))
    n += _cache_controlled(body.get("system"))
    for m in body["messages"]:
        content = m["content"]
        n += _cache_controlled(content)
        if isinstance(content, list):
            for b in content:
                if b["type"] == "tool_result":
                    n += _cache_controlled(b.get("content"))
    if n > MAX_CACHE_CONTROL_BLOCKS:
        raise Invalid(
            f"A maximum of {MAX_CACHE_CONTROL_BLOCKS} blocks with cache_control may be provided. "
            f"Found {n}."
        )


RULES: list[Callable[[Request], None]] = [
    body_is_an_object,
    required_fields,
    no_extra_fields,
    model_is_a_string,
    max_tokens_is_a_count,
    stream_is_a_boolean,
    tools_are_valid,
    tool_names_are_unique,
    tool_choice_is_valid,
    thinking_is_valid,
    output_config_is_valid,
    system_is_text,
    messages_are_valid,
    final_assistant_text_is_trimmed,
    tool_uses_are_answered,
    tool_results_answer_the_turn_before,
    thinking_leads_the_tool_use_turn,
    at_most_four_cache_breakpoints,
]


def validate_request(body: Any, *, count_tokens: bool = False) -> str | None:
    """The real API's 400 message for an invalid Messages request (the first rule of
    :data:`RULES` it breaks), else None."""
    req = Request(body, count_tokens)
    try:
        for rule in RULES:
            rule(req)
    except Invalid as exc:
        return str(exc)
    return None
