"""agent/listModels and agent/setModel: the panel's model picker."""

from __future__ import annotations

from typing import Any

from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import invalid, known_session, parse
from agentls.protocol.models import (
    ListModelsParams,
    ListModelsResult,
    ModelEntry,
    SetModelParams,
    SetModelResult,
)


async def list_models(ls: AgentServer, raw: Any) -> dict[str, Any]:
    parse(ListModelsParams, raw)
    agent = await ls.agent()
    models = [ModelEntry.model_validate(row) for row in agent.list_models()]
    return ListModelsResult(models=models, default_model=agent.settings.model).wire()


async def set_model(ls: AgentServer, raw: Any) -> dict[str, Any]:
    params = parse(SetModelParams, raw)
    agent = await ls.agent()
    await known_session(params.session_id, agent.session)
    try:
        agent.check_model(params.model)
    except ValueError as exc:
        raise invalid(f"Invalid params: model: {exc}") from None
    await agent.set_model(params.session_id, params.model)
    return SetModelResult(model=params.model).wire()
