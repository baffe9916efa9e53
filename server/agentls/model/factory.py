"""The provider a model id names, built from the `providers` setting (see providers.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

from agentls.environ_scrub import CLOUD_CREDENTIALS, credential, keep_credentials
from agentls.model.anthropic_provider import AnthropicProvider
from agentls.model.base import ModelRequest, Provider, ProviderError, StreamEvent
from agentls.model.providers import ProviderSettings, UnknownProvider, resolve


@dataclass
class ProviderOptions:
    """What every provider takes from the settings: retries, timeout, prompt caching."""

    max_attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    timeout_s: float = 600.0
    prompt_caching: bool = True


class UnavailableProvider:
    """A model id no provider serves: each request fails with the reason, as a turn error."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        raise ProviderError(self.reason)
        yield  # an async generator

    async def aclose(self) -> None:
        return None


def create_provider(
    model: str, providers: Mapping[str, ProviderSettings], options: ProviderOptions
) -> Provider:
    if model.startswith("scripted:"):
        from agentls.model.scripted import ScriptedProvider

        return ScriptedProvider(model.removeprefix("scripted:"))
    try:
        resolved = resolve(model, providers)
    except UnknownProvider as exc:
        return UnavailableProvider(model, f"Model {model!r}: {exc}")
    settings = resolved.settings
    name, o = resolved.provider, options
    if settings.type == "openai":
        from agentls.model.openai_provider import OpenAIProvider

        if not settings.base_url:
            return UnavailableProvider(model, f"Provider {name!r} has no baseUrl.")
        return OpenAIProvider(
            name=name,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            max_attempts=o.max_attempts,
            base_delay_s=o.base_delay_s,
            max_delay_s=o.max_delay_s,
            timeout_s=o.timeout_s,
        )
    provider: AnthropicProvider
    # A cloud's credentials in the environment are agentls's own once it talks to that cloud.
    keep_credentials(CLOUD_CREDENTIALS.get(settings.type, ()))
    if settings.type == "bedrock":
        from agentls.model.cloud import BedrockProvider

        key = credential(settings.api_key_env) if settings.api_key_env else None
        provider = BedrockProvider(name=name, region=settings.region, api_key=key)
    elif settings.type == "vertex":
        from agentls.model.cloud import VertexProvider

        provider = VertexProvider(name=name, region=settings.region, project=settings.project)
    else:
        key = credential(settings.api_key_env) if settings.api_key_env else None
        provider = AnthropicProvider(api_key=key)
        provider.name = name
    provider.configure(
        base_url=settings.base_url,
        max_attempts=o.max_attempts,
        base_delay_s=o.base_delay_s,
        max_delay_s=o.max_delay_s,
        timeout_s=o.timeout_s,
        prompt_caching=o.prompt_caching,
    )
    return provider
