"""The scripted model's `prompts`: a prompt named there plays its steps at any turn, and
`{context}` quotes the context blocks it came with (the VS Code e2e's @problems step)."""

from __future__ import annotations

from typing import Any

from agentls.model.base import ModelRequest, TextDelta
from agentls.model.scripted import ScriptedProvider

PROMPT = "What do @problems say?"  # the panel sends a mention as its name in place
PROBLEM = '<context uri="@problems">\nbroken.ts:1:7 error: wrong type\n</context>'


def history(earlier: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for n in range(earlier):
        messages += [
            {"role": "user", "content": f"prompt {n}"},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        ]
    content = [{"type": "text", "text": PROBLEM}, {"type": "text", "text": PROMPT}]
    return [*messages, {"role": "user", "content": content}]


async def test_a_named_prompt_plays_its_steps_and_quotes_its_context() -> None:
    model = ScriptedProvider("e2e")
    for earlier in (0, 3, 9):
        assert model.pick_step(history(earlier))["blocks"][0]["text"].startswith(
            "The problems you attached:"
        )
    request = ModelRequest(
        model="scripted:e2e", system=[], messages=history(2), tools=[], max_tokens=100
    )
    text = ""
    async for event in model.stream(request):
        if isinstance(event, TextDelta):
            text += event.text
    assert text == f"The problems you attached:\n{PROBLEM}"


def test_other_prompts_keep_their_turns() -> None:
    model = ScriptedProvider("e2e")
    first = model.pick_step([{"role": "user", "content": "Fix the failing test in calc.py."}])
    assert [b.get("tool") for b in first["blocks"]] == [None, "read"]
