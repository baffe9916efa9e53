"""Extended thinking: its setting, and the request's `thinking` parameter and max_tokens from it.

Thinking is on by default, as Anthropic recommends for agentic coding: the models that think
adaptively (the Claude 5 models; model/table.py `adaptive_thinking`) are sent
`{"type": "adaptive"}` (they decide how much to think, between tool calls too, and refuse a fixed
budget with a 400), the older ones (Claude 4.5) a budget of DEFAULT_BUDGET_TOKENS. A model without
extended thinking (an OpenAI-compatible one, the scripted model) is sent none.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentls.model.catalog import model_info
from agentls.wire import WireModel

DEFAULT_BUDGET_TOKENS = 8_000
MIN_BUDGET_TOKENS = 1_024


class ThinkingSettings(WireModel):
    """The `thinking` setting. "auto" (the default, also when the setting is absent): adaptive
    thinking on a model that thinks adaptively, else a budget of 8,000 tokens. "adaptive" and
    "enabled" (with `budgetTokens`) ask for thinking: each model gets the kind it takes (a budget
    is sent only to a model that takes one). "disabled" sends no thinking parameter (a model whose
    thinking is always on still thinks). `display`: "summarized" or "omitted" thinking text;
    `effort`: "low" to "max", how much a model that thinks adaptively thinks (its own default
    when absent)."""

    type: Literal["auto", "enabled", "adaptive", "disabled"] = "auto"
    budget_tokens: int | None = Field(default=None, ge=MIN_BUDGET_TOKENS)
    display: Literal["summarized", "omitted"] | None = None
    # How much a model that thinks adaptively thinks and does (the API's output_config.effort);
    # None: the model's default. Not sent to the others.
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None


def thinking_request(
    setting: ThinkingSettings | None, model: str, max_tokens: int, max_output: int
) -> tuple[dict[str, Any] | None, int]:
    """The `thinking` parameter (None: leave it out) and the max_tokens to send with it.

    With a budget, max_tokens must exceed it: the budget is added on top of the configured
    max_tokens (up to the model's output limit) so thinking does not eat the answer.
    """
    setting = setting or ThinkingSettings()
    if setting.type == "disabled" or model.startswith("scripted:"):
        return None, max_tokens
    info = model_info(model)
    if not info.thinking:  # a model without extended thinking is sent none
        return None, max_tokens
    param: dict[str, Any]
    if info.adaptive_thinking:
        param = {"type": "adaptive"}
    else:
        budget = setting.budget_tokens or DEFAULT_BUDGET_TOKENS
        if max_tokens <= budget:
            max_tokens = min(max_output, budget + max_tokens)
        budget = min(budget, max_tokens - 1)
        if budget < MIN_BUDGET_TOKENS:  # no room for the smallest budget the API takes
            return None, max_tokens
        param = {"type": "enabled", "budget_tokens": budget}
    if setting.display is not None:
        param["display"] = setting.display
    return param, max_tokens


def effort_request(setting: ThinkingSettings | None, model: str) -> dict[str, Any] | None:
    """The `output_config` carrying the configured effort, for a model that thinks adaptively
    (effort is the control of its thinking); None: leave it out."""
    if setting is None or setting.effort is None or model.startswith("scripted:"):
        return None
    info = model_info(model)
    if not (info.thinking and info.adaptive_thinking):
        return None
    return {"effort": setting.effort}
