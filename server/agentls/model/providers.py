"""Which provider a model id names, and the `providers` setting that configures them.

A model id `<name>/<model>` names the provider `<name>`: one of the `providers` setting, else a
built-in one (`local`: Ollama's OpenAI-compatible API on this machine; `bedrock` and `vertex`:
Claude on Amazon Bedrock and Google Vertex AI, region and project from the environment;
`anthropic`: Anthropic's API, as a bare `claude-...` id). A plain id is Anthropic's.

    {"providers": {"lmstudio": {"type": "openai", "baseUrl": "http://localhost:1234/v1",
                                "models": {"qwen3-coder": {"contextWindow": 65536}}},
                   "bedrock": {"type": "bedrock", "region": "eu-west-1"}}}

For Bedrock and Vertex the catalogue's names are mapped to the clouds' own ids
(`bedrock/claude-opus-5` is sent as `global.anthropic.claude-opus-5`); an id already in the
cloud's form (`bedrock/eu.anthropic.claude-sonnet-4-5-20250929-v1:0`) is sent as it is and
priced as the catalogue model it names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from pydantic import Field

from agentls.model.table import FALLBACK, LOCAL_DEFAULT, ModelInfo, claude_info, info_of
from agentls.wire import WireModel

ProviderType = Literal["openai", "bedrock", "vertex", "anthropic"]


class ModelSpec(WireModel):
    """What agentls should know of one model of a provider (prices in USD per million tokens)."""

    id: str | None = None  # the id sent to the API, when it differs from the key
    name: str | None = None
    context_window: int | None = Field(default=None, ge=1)
    max_output: int | None = Field(default=None, ge=1)
    input_price: float | None = Field(default=None, ge=0)
    output_price: float | None = Field(default=None, ge=0)
    images: bool | None = None
    thinking: bool | None = None
    caching: bool | None = None


class ProviderSettings(WireModel):
    """One entry of the `providers` setting. An untrusted workspace cannot set any (a baseUrl
    would send the user's code, and the key apiKeyEnv names, elsewhere)."""

    type: ProviderType
    base_url: str | None = None
    # The environment variable holding the API key (an OpenAI-compatible server, a gateway).
    api_key_env: str | None = None
    models: dict[str, ModelSpec] | None = None
    region: str | None = None
    project: str | None = None


BUILTIN_PROVIDERS: dict[str, ProviderSettings] = {
    "local": ProviderSettings(type="openai", base_url="http://localhost:11434/v1"),
    "bedrock": ProviderSettings(type="bedrock"),
    "vertex": ProviderSettings(type="vertex"),
    "anthropic": ProviderSettings(type="anthropic"),
}

# Claude models whose cloud ids carry a date; the newer ones are the catalogue's name.
_DATED = {
    "claude-sonnet-4-5": "20250929",
    "claude-haiku-4-5": "20251001",
    "claude-opus-4-5": "20251101",
}
# Bedrock serves the newer models through inference profiles; `global.` routes to any region.
BEDROCK_PROFILE = "global."


def bedrock_id(name: str) -> str:
    date = _DATED.get(name)
    base = f"anthropic.{name}-{date}-v1:0" if date else f"anthropic.{name}"
    return BEDROCK_PROFILE + base


def vertex_id(name: str) -> str:
    date = _DATED.get(name)
    return f"{name}@{date}" if date else name


@dataclass(frozen=True)
class Resolved:
    """A model id taken apart: the provider's name and settings, the id its API takes, and the
    model's figures."""

    provider: str
    settings: ProviderSettings
    api_model: str
    info: ModelInfo


class UnknownProvider(ValueError):
    pass


# The `providers` setting in use (the Agent sets it from its settings): model_info reads the
# models it describes. One workspace per process, so one table.
_configured: dict[str, ProviderSettings] = {}


def use_providers(providers: Mapping[str, ProviderSettings] | None) -> None:
    """The `providers` setting model_info and price read from now on."""
    _configured.clear()
    _configured.update(providers or {})


def configured_providers() -> dict[str, ProviderSettings]:
    return dict(_configured)


def provider_settings(name: str, configured: Mapping[str, ProviderSettings]) -> ProviderSettings:
    found = configured.get(name) or BUILTIN_PROVIDERS.get(name)
    if found is None:
        known = ", ".join(sorted({*configured, *BUILTIN_PROVIDERS}))
        raise UnknownProvider(f"no provider named {name!r} (configured or built in: {known})")
    return found


def resolve(model_id: str, configured: Mapping[str, ProviderSettings]) -> Resolved:
    """The provider and figures of `<provider>/<model>` (or a bare Claude id). Raises
    UnknownProvider for a provider nobody configured."""
    name, slash, model = model_id.partition("/")
    if not slash:
        name, model = "anthropic", model_id
    settings = provider_settings(name, configured)
    spec = (settings.models or {}).get(model)
    api_model = spec.id if spec is not None and spec.id else model
    if settings.type == "openai":
        base = LOCAL_DEFAULT
    else:
        claude = claude_info(api_model) or claude_info(model)
        if claude is not None and settings.type == "bedrock" and api_model == claude.id:
            api_model = bedrock_id(claude.id)
        elif claude is not None and settings.type == "vertex" and api_model == claude.id:
            api_model = vertex_id(claude.id)
        base = claude or FALLBACK
    info = info_of(model_id, base.name if base is not LOCAL_DEFAULT else model, base)
    if spec is not None:
        info = _with_spec(info, spec)
    return Resolved(name, settings, api_model, info)


def _with_spec(info: ModelInfo, spec: ModelSpec) -> ModelInfo:
    return replace(
        info,
        name=spec.name or info.name,
        context_window=spec.context_window or info.context_window,
        max_output=spec.max_output or info.max_output,
        input_usd_per_mtok=_first(spec.input_price, info.input_usd_per_mtok),
        output_usd_per_mtok=_first(spec.output_price, info.output_usd_per_mtok),
        images=_first(spec.images, info.images),
        thinking=_first(spec.thinking, info.thinking),
        caching=_first(spec.caching, info.caching),
    )


T = TypeVar("T")


def _first(value: T | None, default: T) -> T:
    return default if value is None else value


def api_model_of(model_id: str, provider: str) -> str:
    """The id `provider`'s API takes for `model_id` (`<provider>/<model>`, or a bare model of it)."""
    qualified = model_id if "/" in model_id else f"{provider}/{model_id}"
    try:
        return resolve(qualified, configured_providers()).api_model
    except UnknownProvider:
        return model_id.partition("/")[2] or model_id
