"""Extended thinking: its setting, and the request's `thinking` parameter and max_tokens from it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentls.model.catalog import model_info
from agentls.wire import WireModel

DEFAULT_BUDGET_TOKENS = 8_000
MIN_BUDGET_TOKENS = 1_024


class ThinkingSettings(WireModel):
    """Extended thinking: `{"type": "enabled", "budgetTokens": N}` or `{"type": "adaptive"}`
    (the model decides how much to think); "disabled" (the default) sends nothing."""

    type: Literal["enabled", "adaptive", "disabled"] = "enabled"
    budget_tokens: int | None = Field(default=None, ge=MIN_BUDGET_TOKENS)
    display: Literal["summarized", "omitted"] | None = None


def thinking_request(
    setting: ThinkingSettings | None, model: str, max_tokens: int, max_output: int
) -> tuple[dict[str, Any] | None, int]:
    """The `thinking` parameter (None: leave it out) and the max_tokens to send with it.

    With a budget, max_tokens must exceed it: the budget is added on top of the configured
    max_tokens (up to the model's output limit) so thinking does not eat the answer.
    """
    if setting is None or setting.type == "disabled" or model.startswith("scripted:"):
        return None, max_tokens
    if not model_info(model).thinking:  # a model without extended thinking is sent none
        return None, max_tokens
    param: dict[str, Any]
    if setting.type == "adaptive":
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
