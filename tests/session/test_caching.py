"""Prompt caching: breakpoints at a stable prefix, so every step reads what the previous wrote."""

from __future__ import annotations

import json
from typing import Any

from agentls.history import to_api_messages
from agentls.model.catalog import price
from messages_api import (
    MessagesAPIServer,
    cache_prefix_problem,
    cache_prefixes,
    reply,
    text,
    tool_use,
)
from tests.conftest import HarnessFactory


def breakpoints(body: dict[str, Any]) -> int:
    return json.dumps(body).count('"cache_control"')


async def test_ten_step_turn_reads_the_previous_prefix_from_cache_at_every_step(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.simulate_cache = True
    h = await make_harness()
    for n in range(9):
        (h.root / f"f{n}.txt").write_text(f"file number {n}\n" * 20)
    api.enqueue(
        *[reply(text(f"Step {n}."), tool_use("read", {"path": f"f{n}.txt"})) for n in range(9)]
    )
    api.enqueue(reply(text("Read them all.")))
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "read the files")
    assert result.finish_reason == "end_turn"
    bodies = h.accepted_requests()
    assert len(bodies) == 10
    for index, body in enumerate(bodies):
        system = body["system"]
        assert isinstance(system, list) and system[-1]["cache_control"] == {"type": "ephemeral"}
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in t for t in body["tools"][:-1])
        assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert breakpoints(body) == (3 if index == 0 else 4)
        # tools, system, the previous request's newest message, this one's newest.
        assert len(cache_prefixes(body)) == breakpoints(body)
    for previous, current in zip(bodies, bodies[1:], strict=False):
        assert cache_prefix_problem(previous, current) is None
        # The tools + system prefix is byte for byte the same at every step.
        assert cache_prefixes(previous)[:2] == cache_prefixes(current)[:2]
    # The server saw the reads: every step after the first read the cache.
    usages = [e.step for e in h.of_type("usage")]
    assert len(usages) == 10
    assert usages[0].cache_read_tokens == 0 and usages[0].cache_write_tokens > 0
    assert all(u.cache_read_tokens > 0 for u in usages[1:])
    # Each step reads everything the previous request had: its reads grow step by step.
    reads = [u.cache_read_tokens for u in usages]
    assert reads == sorted(reads) and reads[-1] > reads[1]
    for u in usages:
        assert u.cost_usd == price("claude-sonnet-5-5", u)
    total = usages[0]
    for u in usages[1:]:
        total = total.add(u)
    assert result.usage == total
    # The history kept in memory and on disk never got a cache_control.
    state = await h.agent.session(session.id)
    assert "cache_control" not in json.dumps(to_api_messages(state.messages))
    loaded = await h.store.load_messages(session.id)
    assert "cache_control" not in json.dumps(to_api_messages(loaded))


async def test_next_turn_reads_the_cache_of_the_last_step(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    api.simulate_cache = True
    h = await make_harness()
    (h.root / "a.txt").write_text("alpha\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"})),
        reply(text("It says alpha.")),
        reply(text("Yes.")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "what is in a.txt?")
    second = await h.agent.prompt(session.id, "sure?")
    bodies = h.accepted_requests()
    assert cache_prefix_problem(bodies[1], bodies[2]) is None
    assert second.usage.cache_read_tokens > 0


async def test_cache_prefix_problem_names_a_changed_prefix(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(text("one")), reply(text("two")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "first")
    (h.root / "AGENTS.md").write_text("Always answer in French.\n")
    await h.agent.prompt(session.id, "second")
    first, second = h.accepted_requests()
    problem = cache_prefix_problem(first, second)
    assert problem is not None and "differs" in problem
    # The tools breakpoint still matches: a system prompt change keeps the tools cached.
    assert cache_prefixes(first)[0] == cache_prefixes(second)[0]


async def test_prompt_caching_can_be_turned_off(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"promptCaching": False})
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "hi")
    assert breakpoints(h.accepted_requests()[0]) == 0
