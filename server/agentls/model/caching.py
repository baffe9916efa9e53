"""Prompt caching: where the cache_control breakpoints go, so each step reads the last one's prefix.

The API caches a request's prefix (tools, then system, then messages) at each block marked
`cache_control`, and a later request whose bytes up to one of its own breakpoints are the same
reads that prefix at a tenth of the input price. Four breakpoints at most; agentls uses:

1. the last tool schema: the tools rarely change, so this survives a system prompt change
   (an instructions file, AGENTS.md or CLAUDE.md, edited);
2. the last system block: tools + system prompt;
3. the last block of the newest message: everything, written for the next step to read;
4. the last block of the user message before it: where the previous request put breakpoint 3,
   so this request reads what the previous one wrote.

The breakpoints are put on copies: the history the agent keeps is never changed.
"""

from __future__ import annotations

from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4


def _marked(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": dict(EPHEMERAL)}


def _mark_last_block(message: dict[str, Any]) -> dict[str, Any] | None:
    content = message.get("content")
    if isinstance(content, str):
        if not content.strip():
            return None
        return {**message, "content": [_marked({"type": "text", "text": content})]}
    if not isinstance(content, list) or not content:
        return None
    last = content[-1]
    # Thinking blocks cannot carry cache_control; agentls only marks user messages anyway.
    if not isinstance(last, dict) or last.get("type") in ("thinking", "redacted_thinking"):
        return None
    return {**message, "content": [*content[:-1], _marked(last)]}


def message_breakpoints(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the messages whose last block gets a breakpoint: the newest one, and the user
    message before it (the newest of the previous request)."""
    if not messages:
        return []
    newest = len(messages) - 1
    out = [newest]
    for index in range(newest - 1, -1, -1):
        if messages[index].get("role") == "user":
            out.append(index)
            break
    return out


def with_cache_breakpoints(
    system: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies of system, tools and messages with at most four cache_control breakpoints."""
    used = 0
    new_tools = list(tools)
    if new_tools:
        new_tools[-1] = _marked(new_tools[-1])
        used += 1
    new_system = list(system)
    if new_system:
        new_system[-1] = _marked(new_system[-1])
        used += 1
    new_messages = list(messages)
    for index in message_breakpoints(new_messages):
        if used >= MAX_BREAKPOINTS:
            break
        marked = _mark_last_block(new_messages[index])
        if marked is not None:
            new_messages[index] = marked
            used += 1
    return new_system, new_tools, new_messages
