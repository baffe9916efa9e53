"""The model table `agentls models` prints and the panel's picker lists: one row per model a
provider is known to serve, with its figures, and whether its API key is at hand."""

from __future__ import annotations

from typing import Any

from agentls.environ_scrub import credential
from agentls.model.catalog import DEFAULT_MODEL, MODELS, ModelInfo
from agentls.model.providers import BUILTIN_PROVIDERS, ProviderSettings, UnknownProvider, resolve


def rows(providers: dict[str, ProviderSettings]) -> list[dict[str, Any]]:
    """One row per model a provider is known to serve, Anthropic's first."""
    out: list[dict[str, Any]] = []
    names = ["anthropic", *(n for n in providers if n != "anthropic")]
    for name in names:
        settings = providers.get(name) or BUILTIN_PROVIDERS[name]
        if settings.type == "openai":
            models = list(settings.models or {})
        else:
            models = list(MODELS) + [m for m in settings.models or {} if m not in MODELS]
        for model in models:
            model_id = model if name == "anthropic" else f"{name}/{model}"
            resolved = resolve(model_id, providers)
            out.append(_row(name, settings, model_id, resolved.api_model, resolved.info))
    return out


def _row(
    provider: str, settings: ProviderSettings, model_id: str, api_model: str, info: ModelInfo
) -> dict[str, Any]:
    return {
        "provider": provider,
        "type": settings.type,
        "model": model_id,
        "apiModel": api_model,
        "contextWindow": info.context_window,
        "maxOutput": info.max_output,
        "inputUsdPerMTok": info.input_usd_per_mtok,
        "outputUsdPerMTok": info.output_usd_per_mtok,
        "images": info.images,
        "thinking": info.thinking,
        "caching": info.caching,
        "default": model_id == DEFAULT_MODEL,
    }


def key_env(settings: ProviderSettings) -> str | None:
    """The environment variable holding the provider's API key; None when it needs none that
    agentls can check (a local server without apiKeyEnv, a cloud's own credentials)."""
    if settings.api_key_env:
        return settings.api_key_env
    return "ANTHROPIC_API_KEY" if settings.type == "anthropic" else None


def has_key(settings: ProviderSettings) -> bool:
    """Whether the provider's key (key_env) is set; True when it needs none."""
    name = key_env(settings)
    if name is None:
        return True
    if name == "ANTHROPIC_API_KEY" and credential("ANTHROPIC_AUTH_TOKEN"):
        return True
    return bool(credential(name))


def picker_rows(providers: dict[str, ProviderSettings]) -> list[dict[str, Any]]:
    """rows() with each provider's keyEnv and hasKey (the panel's picker)."""
    out = []
    for row in rows(providers):
        settings = providers.get(row["provider"]) or BUILTIN_PROVIDERS[row["provider"]]
        out.append({**row, "keyEnv": key_env(settings), "hasKey": has_key(settings)})
    return out


def check_model(model_id: str, providers: dict[str, ProviderSettings]) -> None:
    """Raises ValueError when the id names a provider nobody configured."""
    if model_id.startswith("scripted:"):
        return
    try:
        resolve(model_id, providers)
    except UnknownProvider as exc:
        raise ValueError(str(exc)) from exc
