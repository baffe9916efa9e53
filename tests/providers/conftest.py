"""An Agent with the real provider factory (settings.providers), a real store and the demo's
sample project; the demo's fix scenario as steps any test server can play."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import agentls.demo
from agentls.config import Settings
from agentls.model.catalog import use_providers
from agentls.session.agent import Agent
from agentls.store import Store
from agentls.verify.workspace import DiskWorkspace

SAMPLE = Path(agentls.demo.__file__).parent / "sample"
TESTS = "python3 -m unittest -v 2>&1"
OLD = "    return (ordered[middle] + ordered[middle + 1]) / 2"
NEW = "    return (ordered[middle - 1] + ordered[middle]) / 2"

# The demo's fix: run the tests, read, edit, run them again, say what it was. (text, tool, input)
DEMO_STEPS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("Running the tests first.", "bash", {"command": TESTS}),
    ("test_median_even fails; reading calc.py.", "read", {"path": "calc.py"}),
    ("Off by one in median; fixing it.", "edit",
     {"path": "calc.py", "old_string": OLD, "new_string": NEW}),
    ("The tests again.", "bash", {"command": TESTS}),
    ("All tests pass: median averaged the wrong middle values.", None, {}),
]  # fmt: skip


@dataclass
class AgentHarness:
    agent: Agent
    store: Store
    root: Path
    events: list[Any] = field(default_factory=list)

    async def prompt(self, text: str, model: str | None = None) -> Any:
        session = await self.agent.new_session(model=model)
        return await self.agent.prompt(session.id, text)


@pytest.fixture
async def make_agent(tmp_path: Path) -> AsyncIterator[Any]:
    created: list[AgentHarness] = []

    async def make(settings: dict[str, Any]) -> AgentHarness:
        root = tmp_path / "ws"
        if not root.exists():
            shutil.copytree(SAMPLE, root)
        store = await Store.open(tmp_path / "data" / "agentls.db")
        base = {"apiRetryBaseDelayS": 0.01, "sandbox": "off", "permissions": {"*": "allow"}}
        merged = Settings.model_validate({**base, **settings})
        agent = Agent(store=store, workspace=DiskWorkspace(root, lambda: agent.settings),
                      settings=merged, watch_instructions=False)  # fmt: skip
        harness = AgentHarness(agent, store, root)
        agent.subscribe(harness.events.append)
        created.append(harness)
        return harness

    yield make
    for harness in created:
        await harness.agent.aclose()
        await harness.store.close()


@pytest.fixture(autouse=True)
def _model_table_reset() -> Iterator[None]:
    """An Agent sets the model table's providers (catalog.use_providers): none after a test."""
    yield
    use_providers(None)
