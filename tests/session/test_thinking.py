"""Extended thinking: on by default (adaptive for the models that think adaptively, a budget for
the others), configurable, streamed as thinking parts, stored with their signatures and sent back
the way the API requires (before the tool_use they led to)."""

from __future__ import annotations

from agentls.history import ThinkingPart
from messages_api import (
    MessagesAPIServer,
    redacted_thinking,
    reply,
    text,
    thinking,
    tool_use,
)
from tests.conftest import HarnessFactory

# Claude Sonnet 4.5 takes a thinking budget (the Claude 5 models think adaptively only).
BUDGET_MODEL = "claude-sonnet-4-5"
ENABLED = {
    "model": BUDGET_MODEL,
    "thinking": {"type": "enabled", "budgetTokens": 2048},
    "maxTokens": 4096,
}


async def test_thinking_streams_is_stored_and_sent_back_before_the_tool_use(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(ENABLED)
    (h.root / "a.txt").write_text("a\n")
    api.enqueue(
        reply(thinking("Let me look at the file.", "sig-1"), tool_use("read", {"path": "a.txt"})),
        reply(thinking("It holds a.", "sig-2"), text("The file holds a.")),
        reply(thinking("Same again.", "sig-3"), text("Still a.")),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "what is in a.txt?")
    assert result.finish_reason == "end_turn" and result.text == "The file holds a."
    bodies = h.accepted_requests()
    assert all(b["thinking"] == {"type": "enabled", "budget_tokens": 2048} for b in bodies)
    assert all(b["max_tokens"] == 4096 for b in bodies)
    deltas = "".join(e.delta for e in h.of_type("thinking-delta"))
    assert deltas == "Let me look at the file.It holds a."
    loaded = await h.store.load_messages(session.id)
    thoughts = [p for m in loaded for p in m.parts if isinstance(p, ThinkingPart)]
    assert [(t.text, t.signature) for t in thoughts] == [
        ("Let me look at the file.", "sig-1"),
        ("It holds a.", "sig-2"),
    ]
    assistant = bodies[1]["messages"][1]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "Let me look at the file.",
        "signature": "sig-1",
    }
    assert assistant["content"][1]["type"] == "tool_use"
    # A later turn sends the whole history back, thinking included, and the server accepts it.
    await h.agent.prompt(session.id, "again")
    last = h.accepted_requests()[-1]["messages"]
    assert last[3]["content"][0]["signature"] == "sig-2"


async def test_budget_gets_room_above_a_small_max_tokens(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(
        {
            "model": BUDGET_MODEL,
            "thinking": {"type": "enabled", "budgetTokens": 2048},
            "maxTokens": 1000,
        }
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "hi")
    body = h.accepted_requests()[0]
    assert body["thinking"]["budget_tokens"] == 2048 and body["max_tokens"] == 3048


async def test_thinking_is_on_by_default_adaptive_or_a_budget_as_the_model_takes_it(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()  # no thinking setting; claude-sonnet-5-5 thinks adaptively
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "hi")
    assert h.accepted_requests()[0]["thinking"] == {"type": "adaptive"}
    # A budget asked of a model that refuses one: it thinks adaptively instead.
    h.agent.update_settings(
        h.agent.settings.merged({"thinking": {"type": "enabled", "budgetTokens": 2048}})
    )
    await h.agent.prompt(session.id, "hi again")
    assert h.accepted_requests()[1]["thinking"] == {"type": "adaptive"}
    # A model that takes a budget gets the default one by default.
    h.agent.update_settings(h.agent.settings.merged({"thinking": None}))
    await h.agent.set_model(session.id, BUDGET_MODEL)
    api.enqueue(reply(thinking("Short.", "sig"), text("hello")))
    await h.agent.prompt(session.id, "and again")
    body = h.accepted_requests()[2]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert body["max_tokens"] > 8000
    h.agent.update_settings(h.agent.settings.merged({"thinking": "disabled"}))
    await h.agent.prompt(session.id, "no thinking")
    assert "thinking" not in h.accepted_requests()[3]


async def test_redacted_thinking_is_kept_and_sent_back(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(ENABLED)
    api.enqueue(
        reply(redacted_thinking("ENCRYPTED-BLOB"), tool_use("list", {})),
        reply(thinking("done", "sig"), text("Listed.")),
    )
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "list")
    assert result.text == "Listed."
    assistant = h.accepted_requests()[1]["messages"][1]
    assert assistant["content"][0] == {"type": "redacted_thinking", "data": "ENCRYPTED-BLOB"}
    loaded = await h.store.load_messages(session.id)
    part = loaded[1].parts[0]
    assert isinstance(part, ThinkingPart) and part.data == "ENCRYPTED-BLOB" and part.text == ""


async def test_a_configured_effort_is_sent_as_output_config_and_accepted(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"thinking": {"type": "auto", "effort": "low"}})
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "hi")
    body = h.accepted_requests()[0]
    assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "low"}
    # Not to a model that thinks with a budget.
    await h.agent.set_model(session.id, BUDGET_MODEL)
    api.enqueue(reply(thinking("Short.", "sig"), text("hello")))
    await h.agent.prompt(session.id, "again")
    assert "output_config" not in h.accepted_requests()[1]
