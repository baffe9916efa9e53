"""Prompt caching: the prefixes the cache keys on, why a request misses, and the simulated cache's
usage."""

from __future__ import annotations

from typing import Any

from messages_api import (
    MessagesAPIServer,
    cache_prefix_problem,
    cache_prefixes,
)
from tests.messages_api.conftest import body, sclient

EPH = {"type": "ephemeral"}
TOOL = {"name": "read", "description": "d", "input_schema": {"type": "object"}}


def cached_body(messages: list[Any]) -> dict[str, Any]:
    return body(
        messages,
        tools=[{**TOOL, "cache_control": EPH}],
        system=[{"type": "text", "text": "system prompt " * 20, "cache_control": EPH}],
    )


def turn(n: int, *, mark: bool) -> list[Any]:
    """A conversation of n user turns; the last user message marked when `mark`."""
    out: list[Any] = []
    for k in range(n):
        block: dict[str, Any] = {"type": "text", "text": f"question {k} " * 10}
        if mark and k == n - 1:
            block = {**block, "cache_control": EPH}
        out.append({"role": "user", "content": [block]})
        if k < n - 1:
            out.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]})
    return out


def test_cache_prefixes_ignore_the_markers_and_follow_cache_order() -> None:
    first = cached_body(turn(1, mark=True))
    prefixes = cache_prefixes(first)
    assert len(prefixes) == 3
    assert prefixes[0].startswith('{"model":"claude-test"}') and "cache_control" not in prefixes[2]
    # tools, then system, then messages: each prefix extends the one before.
    assert prefixes[1].startswith(prefixes[0]) and prefixes[2].startswith(prefixes[1])
    assert '"name":"read"' in prefixes[0] and "system prompt" not in prefixes[0]
    # The next request marks the previous newest message again: a cache read.
    second = cached_body(turn(2, mark=True))
    second["messages"][0]["content"][0]["cache_control"] = EPH
    assert cache_prefix_problem(first, second) is None
    # Without a breakpoint there, or with changed bytes before it, no read.
    unmarked = cached_body(turn(2, mark=True))
    assert "no breakpoint there" in (cache_prefix_problem(first, unmarked) or "")
    changed = cached_body(turn(2, mark=True))
    changed["system"][0]["text"] = "another prompt"
    assert "differs" in (cache_prefix_problem(first, changed) or "")


def test_simulated_cache_reports_reads_and_writes() -> None:
    with MessagesAPIServer(simulate_cache=True) as srv:
        client = sclient(srv)
        first = cached_body(turn(1, mark=True))
        m1 = client.messages.create(**first)
        second = cached_body(turn(2, mark=True))
        second["messages"][0]["content"][0]["cache_control"] = EPH
        m2 = client.messages.create(**second)
        prefixes1, prefixes2 = cache_prefixes(first), cache_prefixes(second)
    assert m1.usage.cache_read_input_tokens == 0
    assert m1.usage.cache_creation_input_tokens == len(prefixes1[-1]) // 4
    assert m2.usage.cache_read_input_tokens == len(prefixes1[-1]) // 4
    assert m2.usage.cache_creation_input_tokens == (len(prefixes2[-1]) - len(prefixes1[-1])) // 4
    # Off by default: no cache fields.
    with MessagesAPIServer() as plain:
        m3 = sclient(plain).messages.create(**first)
    assert m3.usage.cache_read_input_tokens == 0 and m3.usage.cache_creation_input_tokens == 0
