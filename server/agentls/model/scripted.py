"""The built-in scripted model: plays a fixed scenario offline through the Provider interface.

Selected with the model id `scripted:<scenario>`; scenarios ship as JSON in model/scenarios/.
It decides what to say from the request alone (which prompt of the session, which step of the
turn, whether the last tool call failed), so it behaves the same after a reload. A step with
`fail_once` ({"kind", "details"}) fails that way the first time this process plays it (an API
down, then back: a retry of the turn plays its blocks).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any, Literal

from agentls.history import new_id
from agentls.model.base import (
    BlockStart,
    BlockStop,
    MessageBegin,
    MessageEnd,
    ModelRequest,
    ProviderError,
    StepUsage,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)

SCRIPTED_PREFIX = "scripted:"


def available_scenarios() -> list[str]:
    folder = resources.files("agentls.model") / "scenarios"
    return sorted(
        p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")
    )


def load_scenario(name: str) -> dict[str, Any]:
    path = resources.files("agentls.model") / "scenarios" / f"{name}.json"
    if not path.is_file():
        known = ", ".join(available_scenarios())
        raise ProviderError(f"Unknown scripted scenario {name!r}; the built-in ones are: {known}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _is_prompt(message: dict[str, Any]) -> bool:
    if message["role"] != "user":
        return False
    content = message["content"]
    if isinstance(content, str):
        return True
    return any(block.get("type") == "text" for block in content)


def _prompt_text(message: dict[str, Any]) -> str:
    """A prompt's own text: its last text block (context blocks come before it)."""
    content = message["content"]
    if isinstance(content, str):
        return content
    texts = [b["text"] for b in content if b.get("type") == "text"]
    return str(texts[-1]) if texts else ""


def _last_prompt_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if _is_prompt(message):
            content = message["content"]
            if isinstance(content, str):
                return content
            texts = [b["text"] for b in content if b.get("type") == "text"]
            return texts[-1] if texts else ""
    return ""


def _last_prompt_context(messages: list[dict[str, Any]]) -> str:
    """The context blocks the last prompt came with (the text blocks before its own)."""
    for message in reversed(messages):
        if _is_prompt(message):
            content = message["content"]
            if isinstance(content, str):
                return ""
            texts = [str(b["text"]) for b in content if b.get("type") == "text"]
            return "\n".join(texts[:-1])
    return ""


def _last_tool_result(messages: list[dict[str, Any]]) -> tuple[str, bool] | None:
    last = messages[-1] if messages else None
    if not last or last["role"] != "user" or isinstance(last["content"], str):
        return None
    results = [b for b in last["content"] if b.get("type") == "tool_result"]
    if not results:
        return None
    block = results[-1]
    content = block.get("content", "")
    if isinstance(content, list):
        content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content), bool(block.get("is_error"))


class ScriptedProvider:
    """Streams the scenario's reply for this request, in small chunks like a real model."""

    name = "scripted"

    def __init__(self, scenario: str) -> None:
        self.scenario_name = scenario
        self.scenario = load_scenario(scenario)
        self.failed: set[int] = set()  # the fail_once steps played (by id)

    async def aclose(self) -> None:
        return None

    def pick_step(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        prompt_indexes = [i for i, m in enumerate(messages) if _is_prompt(m)]
        turn = max(len(prompt_indexes) - 1, 0)
        start = prompt_indexes[-1] if prompt_indexes else 0
        step = sum(1 for m in messages[start:] if m["role"] == "assistant")
        turns: list[list[dict[str, Any]]] = self.scenario["turns"]
        # A sub-agent's session (the task tool's): its steps by the task's prompt.
        tasks: dict[str, list[dict[str, Any]]] = self.scenario.get("tasks", {})
        if prompt_indexes and turn == 0 and _prompt_text(messages[start]) in tasks:
            turns = [tasks[_prompt_text(messages[start])]]
        # A prompt named in `prompts` plays its steps, whatever the turn (it still counts as one).
        prompts: dict[str, list[dict[str, Any]]] = self.scenario.get("prompts", {})
        if prompt_indexes and _prompt_text(messages[start]) in prompts:
            turns, turn = [prompts[_prompt_text(messages[start])]], 0
        if self.scenario.get("repeat_last_turn") and turn >= len(turns):
            turn = len(turns) - 1
        if turn >= len(turns) or step >= len(turns[turn]):
            return {"blocks": [{"text": "(The scripted scenario has nothing more to say.)"}]}
        chosen: dict[str, Any] = turns[turn][step]
        last = _last_tool_result(messages)
        if last is not None and last[1] and "if_error" in chosen:
            chosen = chosen["if_error"]
        return chosen

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        step = self.pick_step(request.messages)
        fail = step.get("fail_once")
        if isinstance(fail, dict) and id(step) not in self.failed:
            self.failed.add(id(step))
            raise ProviderError(
                str(fail.get("details", "failed")), kind=fail.get("kind", "network")
            )
        last = _last_tool_result(request.messages)
        values = {
            "prompt": _last_prompt_text(request.messages),
            "context": _last_prompt_context(request.messages),
            "last_result": (last[0] if last else "")[:2000],
        }
        chunk = int(self.scenario.get("chunk_chars", 12))
        delay = float(self.scenario.get("delay_ms", 0)) / 1000
        approx_input = len(json.dumps(request.messages)) // 4
        yield MessageBegin(new_id("msg"), StepUsage(input_tokens=approx_input, output_tokens=1))
        output_chars = 0
        has_tool = False
        for index, block in enumerate(step["blocks"]):
            if "text" in block or "thinking" in block:
                kind: Literal["text", "thinking"] = "text" if "text" in block else "thinking"
                text = str(block[kind])
                for key, value in values.items():
                    text = text.replace("{" + key + "}", value)
                repeat = int(block.get("repeat", 1))
                text = text * repeat
                yield BlockStart(index, kind)
                for offset in range(0, len(text), chunk):
                    piece = text[offset : offset + chunk]
                    output_chars += len(piece)
                    yield TextDelta(index, piece) if kind == "text" else ThinkingDelta(index, piece)
                    if delay:
                        await asyncio.sleep(delay)
                yield BlockStop(index)
            elif "tool" in block:
                has_tool = True
                yield BlockStart(
                    index, "tool_use", tool_id=new_id("toolu"), tool_name=block["tool"]
                )
                raw = json.dumps(block.get("input", {}))
                for offset in range(0, len(raw), 40):
                    yield ToolInputDelta(index, raw[offset : offset + 40])
                output_chars += len(raw)
                yield BlockStop(index)
                if delay:
                    await asyncio.sleep(delay)
        stop = "tool_use" if has_tool else "end_turn"
        yield MessageEnd(
            stop, StepUsage(input_tokens=approx_input, output_tokens=max(output_chars // 4, 1))
        )
