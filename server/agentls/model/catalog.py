"""The Claude models agentls knows: context window, output limit and price per million tokens."""

from __future__ import annotations

from dataclasses import dataclass

from agentls.history import Usage


@dataclass(frozen=True)
class ModelInfo:
    id: str
    name: str
    context_window: int
    max_output: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float

    @property
    def cache_write_usd_per_mtok(self) -> float:
        # 5-minute cache writes cost 1.25x the input price.
        return self.input_usd_per_mtok * 1.25

    @property
    def cache_read_usd_per_mtok(self) -> float:
        return self.input_usd_per_mtok * 0.1


# Prices as published on the Claude platform's models overview (November 2026).
MODELS: dict[str, ModelInfo] = {
    m.id: m
    for m in (
        ModelInfo("claude-fable-5-2", "Claude Fable 5.2", 1_000_000, 128_000, 8.0, 40.0),
        ModelInfo("claude-opus-5-5", "Claude Opus 5.5", 1_000_000, 128_000, 4.0, 20.0),
        ModelInfo("claude-sonnet-5-5", "Claude Sonnet 5.5", 1_000_000, 128_000, 2.0, 10.0),
        ModelInfo("claude-haiku-5-5", "Claude Haiku 5.5", 1_000_000, 128_000, 0.10, 0.50),
        ModelInfo("claude-fable-5-1", "Claude Fable 5.1", 1_000_000, 128_000, 10.0, 50.0),
        ModelInfo("claude-opus-5", "Claude Opus 5", 1_000_000, 128_000, 5.0, 25.0),
        ModelInfo("claude-sonnet-5", "Claude Sonnet 5", 1_000_000, 128_000, 2.0, 10.0),
        ModelInfo("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000, 1.0, 5.0),
        ModelInfo("claude-opus-4-5", "Claude Opus 4.5", 200_000, 64_000, 5.0, 25.0),
        ModelInfo("claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, 64_000, 3.0, 15.0),
    )
}

DEFAULT_MODEL = "claude-opus-5-5"
# Unknown ids (new snapshots, proxies) are priced and sized like the default until the table knows them.
_FALLBACK = MODELS[DEFAULT_MODEL]
SCRIPTED_INFO = ModelInfo(
    "scripted", "Scripted model (offline, built in)", 200_000, 32_000, 0.0, 0.0
)


def model_info(model_id: str) -> ModelInfo:
    if model_id.startswith("scripted:"):
        return SCRIPTED_INFO
    if model_id in MODELS:
        return MODELS[model_id]
    # Dated snapshots ("claude-haiku-4-5-20251001") share their alias's figures.
    for known_id, info in MODELS.items():
        if model_id.startswith(known_id + "-"):
            return info
    return _FALLBACK


def price(model_id: str, usage: Usage) -> float:
    info = model_info(model_id)
    cost = (
        usage.input_tokens * info.input_usd_per_mtok
        + usage.output_tokens * info.output_usd_per_mtok
        + usage.cache_write_tokens * info.cache_write_usd_per_mtok
        + usage.cache_read_tokens * info.cache_read_usd_per_mtok
    ) / 1_000_000
    return round(cost, 8)
