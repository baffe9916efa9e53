"""A session's total is what it cost, whole: its sub-agents' usage counts into it (and is kept as
their share), and so does a step stopped before it finished (what the stream reported, the
output estimated and marked so); stored, and the same in `agentls sessions`."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from agentls.cli.main import main
from agentls.history import Usage
from agentls.model.catalog import price
from agentls.store import Store
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory

MODEL = "claude-sonnet-5-5"


def usage(n: int) -> dict[str, int]:
    return {"input_tokens": n, "output_tokens": n}


def priced(n: int) -> Usage:
    step = Usage(input_tokens=n, output_tokens=n)
    step.cost_usd = price(MODEL, step)
    return step


def task(description: str, prompt: str) -> Any:
    return tool_use("task", {"description": description, "prompt": prompt})


async def test_a_sub_agents_usage_counts_into_the_session_total_and_is_kept_as_its_share(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    h = await make_harness()
    api.enqueue(
        reply(task("look", "Say hi."), usage=usage(10)),
        reply(text("hi"), usage=usage(1000)),  # the sub-agent's one step
        reply(text("done"), usage=usage(100)),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "go")
    assert result.finish_reason == "end_turn"
    child_share = priced(1000)
    whole = priced(10).add(child_share).add(priced(100))
    assert result.usage == whole
    stored = await h.store.get_session(session.id)
    assert stored is not None and stored.usage == whole
    assert stored.subagent_usage == child_share
    record = (await h.agent.session(session.id)).record
    assert record.usage == whole and record.subagent_usage == child_share
    last = [e for e in h.of_type("usage") if e.session_id == session.id][-1]
    assert last.session == whole and last.subagents == child_share
    # `agentls sessions` shows the same total.
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    assert await asyncio.to_thread(main, ["sessions", "--json"]) == 0
    listed = {s["id"]: s for s in json.loads(capsys.readouterr().out)}
    assert listed[session.id]["usage"] == whole.wire()
    assert listed[session.id]["subagentUsage"] == child_share.wire()


async def test_a_stopped_step_counts_what_the_stream_reported_and_estimates_its_output(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hold = threading.Event()
    partial = "x" * 400  # streamed before the stop: about 100 tokens
    api.enqueue(
        reply(
            text(partial + "y" * 400),
            usage={"input_tokens": 5000, "cache_read_input_tokens": 2000, "output_tokens": 200},
            chunk_size=400,
            hold=hold,
            hold_after=4,  # message_start, ping, the block's start, its first delta
        )
    )
    h = await make_harness()
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    await h.wait_for("text-delta")
    assert await h.agent.cancel(session.id)
    result = await turn
    hold.set()
    assert result.finish_reason == "cancelled"
    expected = Usage(
        input_tokens=5000,
        cache_read_tokens=2000,
        output_tokens=len(result.text) // 4,
        estimated=True,
    )
    expected.cost_usd = price(MODEL, expected)
    assert result.text and result.usage == expected
    loaded = await h.store.load_messages(session.id)
    assert loaded[-1].finish_reason == "cancelled" and loaded[-1].usage == expected
    stored = await h.store.get_session(session.id)
    assert stored is not None and stored.usage == expected and stored.usage.estimated
    (event,) = h.of_type("usage")
    assert event.session == expected and event.step.estimated
    # `agentls sessions` marks the estimated cost.
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    assert await asyncio.to_thread(main, ["sessions"]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert f"~${expected.cost_usd:,.4f}" in row and "5,000" in row


async def test_a_turn_stopped_inside_a_sub_agent_counts_the_sub_agents_usage(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    hold = threading.Event()
    api.enqueue(
        reply(task("look", "Read on."), usage=usage(10)),
        reply(tool_use("glob", {"pattern": "*"}), usage=usage(300)),
        reply(text("never finished"), hold=hold, usage=usage(7)),
    )
    h = await make_harness()
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    await h.wait_for("tool-result")  # the sub-agent's glob ran: its second step streams now
    await asyncio.to_thread(api.wait_for_requests, 3)
    assert await h.agent.cancel(session.id)
    result = await turn
    hold.set()
    assert result.finish_reason == "cancelled"
    stored = await h.store.get_session(session.id)
    assert stored is not None and stored.subagent_usage is not None
    # The sub-agent's finished step (300) and what its stopped one reported (7 input) count.
    assert stored.subagent_usage.input_tokens == 307
    assert stored.usage.input_tokens == 10 + 307
    assert stored.usage == result.usage


async def test_the_migration_counts_the_sub_agents_of_sessions_stored_before(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    store = await Store.open(path)
    parent = await store.create_session("parent", "/w", MODEL)
    child = await store.create_session("child", "/w", MODEL)
    await store.set_parent(child.id, parent.id, "general")
    await store.add_session_usage(parent.id, priced(10))
    await store.add_session_usage(child.id, priced(1000))
    await store.close()
    conn = sqlite3.connect(path)  # as a database of migration 11 would be
    conn.executescript(
        "ALTER TABLE sessions DROP COLUMN subagent_usage;"
        " ALTER TABLE sessions DROP COLUMN usage_estimated; PRAGMA user_version = 11;"
    )
    conn.close()
    store = await Store.open(path)
    try:
        migrated = await store.get_session(parent.id)
        assert migrated is not None
        assert migrated.usage == priced(10).add(priced(1000))
        assert migrated.subagent_usage == priced(1000)
        unchanged = await store.get_session(child.id)
        assert unchanged is not None and unchanged.usage == priced(1000)
    finally:
        await store.close()
