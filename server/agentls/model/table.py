"""The models agentls knows, as data: context window, output limit, price per million tokens,
and what each supports (images, extended thinking, prompt caching). model_info and price
(catalog.py) read it together with the `providers` setting (providers.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ModelInfo:
    id: str
    name: str
    context_window: int
    max_output: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    images: bool = True
    thinking: bool = True
    caching: bool = True
    # How it thinks: adaptively ({"type": "adaptive"}: the Claude 5 models, which refuse a
    # budget), else with a budget ({"type": "enabled", "budget_tokens": N}: Claude 4.5).
    adaptive_thinking: bool = True

    @property
    def cache_write_usd_per_mtok(self) -> float:
        # 5-minute cache writes cost 1.25x the input price.
        return self.input_usd_per_mtok * 1.25 if self.caching else 0.0

    @property
    def cache_read_usd_per_mtok(self) -> float:
        return self.input_usd_per_mtok * 0.1 if self.caching else 0.0

    def capabilities(self) -> list[str]:
        return [n for n, on in (("images", self.images), ("thinking", self.thinking),
                                ("caching", self.caching)) if on]  # fmt: skip


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
        ModelInfo(
            "claude-haiku-4-5",
            "Claude Haiku 4.5",
            200_000,
            64_000,
            1.0,
            5.0,
            adaptive_thinking=False,
        ),
        ModelInfo(
            "claude-opus-4-5",
            "Claude Opus 4.5",
            200_000,
            64_000,
            5.0,
            25.0,
            adaptive_thinking=False,
        ),
        ModelInfo(
            "claude-sonnet-4-5",
            "Claude Sonnet 4.5",
            200_000,
            64_000,
            3.0,
            15.0,
            adaptive_thinking=False,
        ),
    )
}

DEFAULT_MODEL = "claude-opus-5-5"
# Unknown ids (new snapshots, proxies) are priced and sized like the default until the table knows them.
FALLBACK = MODELS[DEFAULT_MODEL]
SCRIPTED_INFO = ModelInfo(
    "scripted", "Scripted model (offline, built in)", 200_000, 32_000, 0.0, 0.0
)
# A model of an OpenAI-compatible server that its provider's `models` does not describe: a modest
# window (compaction starts early rather than never), free, text only.
LOCAL_DEFAULT = ModelInfo(
    "local", "Model of an OpenAI-compatible server", 32_768, 8_192, 0.0, 0.0,
    images=False, thinking=False, caching=False,
)  # fmt: skip


def claude_info(model_id: str) -> ModelInfo | None:
    """The catalogue entry a Claude id names: the id itself, a dated snapshot of it
    (`claude-haiku-4-5-20251001`), or a cloud's form of it (`global.anthropic.claude-opus-5`,
    `claude-sonnet-4-5@20250929`, `anthropic.claude-sonnet-4-5-20250929-v1:0`)."""
    if model_id in MODELS:
        return MODELS[model_id]
    best: ModelInfo | None = None
    for known_id, info in MODELS.items():
        at = model_id.find(known_id)
        if at < 0 or (at > 0 and model_id[at - 1] not in "./"):
            continue
        rest = model_id[at + len(known_id) :]
        if rest and rest[0] not in "-@:":
            continue
        if best is None or len(known_id) > len(best.id):  # claude-opus-5-5 over claude-opus-5
            best = info
    return best


def info_of(model_id: str, name: str, fallback: ModelInfo) -> ModelInfo:
    """`fallback` under the id `model_id` (a cloud's Claude model, an unknown local one)."""
    return replace(fallback, id=model_id, name=name)
