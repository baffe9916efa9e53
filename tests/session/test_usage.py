"""Usage and cost: per step from the API's usage, priced from the model table, summed per turn and
per session, stored, and shown by `agentls sessions`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentls.cli.main import main
from agentls.history import Usage
from agentls.model.catalog import MODELS, price
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory

STEP1 = {
    "input_tokens": 1_000,
    "output_tokens": 500,
    "cache_read_input_tokens": 20_000,
    "cache_creation_input_tokens": 3_000,
}
STEP2 = {
    "input_tokens": 200,
    "output_tokens": 100,
    "cache_read_input_tokens": 23_500,
    "cache_creation_input_tokens": 700,
}


def test_price_uses_the_cache_prices() -> None:
    info = MODELS["claude-sonnet-5-5"]
    assert info.cache_write_usd_per_mtok == pytest.approx(2.5)
    assert info.cache_read_usd_per_mtok == pytest.approx(0.2)
    usage = Usage(
        input_tokens=1_000, output_tokens=500, cache_read_tokens=20_000, cache_write_tokens=3_000
    )
    # 1000 * 2 + 500 * 10 + 3000 * 2.5 + 20000 * 0.2 = 18500 USD per million tokens
    assert price("claude-sonnet-5-5", usage) == pytest.approx(0.0185)


async def test_usage_per_step_turn_and_session_with_cache_tokens(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    h = await make_harness()
    (h.root / "a.txt").write_text("a\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.txt"}), usage=STEP1),
        reply(text("done"), usage=STEP2),
        reply(text("again"), usage=STEP2),
    )
    session = await h.agent.new_session(title="priced")
    result = await h.agent.prompt(session.id, "go")
    step1 = Usage(
        input_tokens=1_000, output_tokens=500, cache_read_tokens=20_000, cache_write_tokens=3_000
    )
    step1.cost_usd = 0.0185
    step2 = Usage(
        input_tokens=200, output_tokens=100, cache_read_tokens=23_500, cache_write_tokens=700
    )
    step2.cost_usd = price("claude-sonnet-5-5", step2)
    # Per step: events and the stored assistant messages.
    events = h.of_type("usage")
    assert [e.step for e in events] == [step1, step2]
    assert events[-1].turn == step1.add(step2)
    loaded = await h.store.load_messages(session.id)
    assert [m.usage for m in loaded if m.role == "assistant"] == [step1, step2]
    # Per turn.
    assert result.usage == step1.add(step2)
    # Per session, across turns, in memory and in the sessions table.
    second = await h.agent.prompt(session.id, "again")
    assert second.usage == step2
    record = await h.store.get_session(session.id)
    assert record is not None
    expected = step1.add(step2).add(step2)
    assert record.usage == expected
    assert (await h.agent.session(session.id)).record.usage == expected
    assert events[-1].session.cost_usd == pytest.approx(step1.add(step2).cost_usd)

    # `agentls sessions` reads the same database.
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    assert await asyncio.to_thread(main, ["sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["usage"] == expected.wire()
    assert await asyncio.to_thread(main, ["sessions"]) == 0
    table = capsys.readouterr().out
    header, row = table.splitlines()[:2]
    assert "input" in header and "cache r/w" in header and "output" in header
    assert "1,400" in row  # uncached input
    assert "67,000/4,400" in row  # cache read / write
    assert "700" in row  # output
    assert f"${expected.cost_usd:.4f}" in row and "priced" in row
