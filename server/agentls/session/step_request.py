"""One step's model request (Turn.step): what the step offers (session/offer.py), the system
prompt that says so (session/system_prompt.py, with the workspace's instructions), the history
in the API's form, and the thinking and output limits of the model."""

from __future__ import annotations

from pathlib import Path

from agentls.model.base import ModelRequest
from agentls.model.catalog import model_info
from agentls.model.thinking import effort_request, thinking_request
from agentls.session.instructions import Instructions
from agentls.session.offer import make_offer
from agentls.session.policy import Policy
from agentls.session.skills import available_skills, skills_prompt
from agentls.session.state import SessionState
from agentls.session.system_prompt import PromptKind, build_system
from agentls.tools.registry import ToolRegistry
from agentls.workspace.protocol import Languages


def step_request(
    *,
    model: str,
    state: SessionState,
    registry: ToolRegistry,
    policy: Policy,
    languages: Languages,
    prompt: PromptKind,
    root: Path,
    instructions: Instructions,
) -> ModelRequest:
    settings = policy.settings
    # Skills for the user's own turns (a sub-agent has its task's instructions).
    skills = (
        {} if prompt.kind == "subagent" else available_skills(root, settings.workspace_trusted)[0]
    )
    offer = make_offer(
        registry,
        languages=languages,
        settings=settings,
        rules=policy.rules,
        front_end=prompt.front_end,
        mode=state.record.mode,
        attended=prompt.attended,
        skills=skills_prompt(skills) or None,
    )
    system = build_system(root, state.record.mode, prompt=prompt, surroundings=offer.surroundings)
    max_output = model_info(model).max_output
    thinking, max_tokens = thinking_request(
        settings.thinking, model, min(settings.max_tokens, max_output), max_output
    )
    return ModelRequest(
        model=model,
        system=instructions.system(system),
        messages=state.api.convert(state.messages),
        tools=registry.offered(offer.hidden),
        max_tokens=max_tokens,
        thinking=thinking,
        output_config=effort_request(settings.thinking, model),
    )
