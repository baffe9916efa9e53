"""One step's model request: the tools it offers, the system prompt with the workspace's
instructions, the history, and the output limit of the model."""

from __future__ import annotations

from pathlib import Path

from agentls.config import Settings
from agentls.history import Message, TextPart
from agentls.language import NoLanguages
from agentls.model.base import ModelRequest
from agentls.model.catalog import model_info
from agentls.session.instructions import Instructions
from agentls.session.policy import Policy
from agentls.session.state import SessionState
from agentls.session.step_request import step_request
from agentls.session.system_prompt import LANGUAGE_TOOLS, PromptKind
from agentls.store.rows import SessionRecord
from agentls.tools.registry import default_registry

MODEL = "claude-sonnet-4-5"


def request_for(root: Path, settings: Settings) -> ModelRequest:
    record = SessionRecord(
        id="s1", title="t", cwd=str(root), model=MODEL, created_at=0, updated_at=0
    )
    hello = Message(
        id="m1", session_id="s1", role="user", created_at=0, parts=[TextPart(text="hello")]
    )
    return step_request(
        model=MODEL,
        state=SessionState(record=record, messages=[hello]),
        registry=default_registry(),
        policy=Policy(settings, str(root)),
        languages=NoLanguages(),
        prompt=PromptKind(),
        root=root,
        instructions=Instructions(root, None, watch=False),
    )


def test_the_request_offers_the_tools_that_can_work_and_sends_the_history(tmp_path: Path) -> None:
    request = request_for(tmp_path, Settings())
    names = [tool["name"] for tool in request.tools]
    assert "read" in names and "bash" in names
    assert not set(LANGUAGE_TOOLS) & set(names)  # no language server here
    assert request.messages[-1]["content"][-1]["text"] == "hello"


def test_the_workspace_instructions_end_the_system_prompt(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always answer in French.\n")
    request = request_for(tmp_path, Settings())
    assert "Always answer in French." in request.system[-1]["text"]


def test_max_tokens_never_exceeds_the_model_output_limit(tmp_path: Path) -> None:
    limit = model_info(MODEL).max_output
    request = request_for(tmp_path, Settings.model_validate({"maxTokens": limit * 10}))
    assert request.max_tokens == limit
