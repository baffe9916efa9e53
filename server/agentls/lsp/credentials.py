"""agent/setApiKey: a provider's key from the editor (its "Set API key" button), used from the
next model call on, without a restart. The key is held in memory only (environ_scrub), never in
os.environ, the store, a log line or an error message."""

from __future__ import annotations

from typing import Any

from agentls.environ_scrub import set_credential
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import invalid, parse
from agentls.model import listing
from agentls.model.providers import BUILTIN_PROVIDERS
from agentls.protocol.models import SetApiKeyParams, SetApiKeyResult


def key_names(agent_providers: dict[str, Any]) -> set[str]:
    """The variables some provider reads its key from (what agent/listModels calls keyEnv)."""
    names = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}
    for settings in [*BUILTIN_PROVIDERS.values(), *agent_providers.values()]:
        name = listing.key_env(settings)
        if name:
            names.add(name)
    return names


async def set_api_key(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(SetApiKeyParams, raw)
    agent = await ls.agent()
    known = key_names(dict(agent.settings.providers or {}))
    if params.name not in known:
        raise invalid(
            f"Invalid params: name: no provider reads its key from {params.name!r} "
            f"(known: {', '.join(sorted(known))})"
        )
    set_credential(params.name, params.key.strip() or None)
    agent.renew_providers()  # a client made with the old key (or none) is made anew
    has_key = any(row["hasKey"] for row in agent.list_models() if row.get("keyEnv") == params.name)
    return SetApiKeyResult(has_key=has_key or bool(params.key.strip())).wire()
