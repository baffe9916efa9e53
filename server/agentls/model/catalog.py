"""The model table as the loop reads it: model_info (a model's window, output limit, prices and
what it supports) and price, for every id a model can have.

Model ids: `claude-...` (Anthropic's API), `scripted:<scenario>` (offline), and
`<provider>/<model>` for a provider of the `providers` setting or a built-in one (`local`,
`bedrock`, `vertex`, `anthropic`: see model/providers.py). `bedrock/claude-sonnet-4-5` and
`vertex/claude-sonnet-4-5` are the table's Claude models on those clouds (their ids there are
mapped by providers.py); a model of an OpenAI-compatible provider is what its `models` entry
says, else LOCAL_DEFAULT. The data is in table.py.
"""

from __future__ import annotations

from agentls.history import Usage
from agentls.model.providers import (
    UnknownProvider,
    configured_providers,
    resolve,
    use_providers,
)
from agentls.model.table import (
    DEFAULT_MODEL,
    FALLBACK,
    LOCAL_DEFAULT,
    MODELS,
    SCRIPTED_INFO,
    ModelInfo,
    claude_info,
    info_of,
)

__all__ = [
    "DEFAULT_MODEL",
    "LOCAL_DEFAULT",
    "MODELS",
    "SCRIPTED_INFO",
    "ModelInfo",
    "claude_info",
    "configured_providers",
    "model_info",
    "price",
    "use_providers",
]


def model_info(model_id: str) -> ModelInfo:
    if model_id.startswith("scripted:"):
        return SCRIPTED_INFO
    if "/" in model_id:
        try:
            return resolve(model_id, configured_providers()).info
        except UnknownProvider:  # its requests fail saying so (model/factory.py)
            return info_of(model_id, model_id, FALLBACK)
    return claude_info(model_id) or FALLBACK


def price(model_id: str, usage: Usage) -> float:
    info = model_info(model_id)
    cost = (
        usage.input_tokens * info.input_usd_per_mtok
        + usage.output_tokens * info.output_usd_per_mtok
        + usage.cache_write_tokens * info.cache_write_usd_per_mtok
        + usage.cache_read_tokens * info.cache_read_usd_per_mtok
    ) / 1_000_000
    return round(cost, 8)
