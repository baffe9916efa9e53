"""Shared fixtures: a local Messages-API server, and an Agent wired to it with a real store."""

from __future__ import annotations

import asyncio
import compileall
import os
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentls import environ_scrub
from agentls.config import Settings
from agentls.language import headless
from agentls.model.anthropic_provider import AnthropicProvider
from agentls.session.agent import Agent
from agentls.store import Store
from agentls.verify.workspace import DiskWorkspace
from messages_api import MessagesAPIServer
from tests import figures


@pytest.fixture(autouse=True)
def _isolated_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads the developer's ~/.config/agentls (config.json, a global AGENTS.md)."""
    home = tmp_path / "config-home"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    # Nor the developer's ~/.claude (its settings' hooks, its skills, agents and commands).
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-home"))
    return home / "agentls"


def _process_state_kept() -> Iterator[None]:
    """Puts back what an Agent sets process-wide as it was: the headless language servers'
    launcher (language/headless.py use_launcher) and the variables read as credentials
    (environ_scrub: kept from child processes, and the keys handed over). Without this, whether a
    later test's headless server runs in the sandbox, or which variables its child processes
    get, would depend on which tests ran before it."""
    launcher = headless._launcher
    named, held = set(environ_scrub._named), dict(environ_scrub._held)
    yield
    headless.use_launcher(launcher)
    environ_scrub._named.clear()
    environ_scrub._named.update(named)
    environ_scrub._held.clear()
    environ_scrub._held.update(held)


# Both: what a module's own Agent (a module fixture) sets is kept for that module only; what one
# made in a test sets, for that test only.
@pytest.fixture(autouse=True, scope="module")
def _process_state_kept_per_module() -> Iterator[None]:
    yield from _process_state_kept()


@pytest.fixture(autouse=True)
def _process_state_kept_per_test() -> Iterator[None]:
    yield from _process_state_kept()


@pytest.fixture
def api() -> Iterator[MessagesAPIServer]:
    with MessagesAPIServer() as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, api: MessagesAPIServer) -> dict[str, str]:
    """The environment of an `agentls` subprocess: the local Messages API, its own data and config
    folders under tmp_path."""
    environment = dict(os.environ)
    environment.update(
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY="test-key",
        AGENTLS_DATA_DIR=str(tmp_path / "data"),
        AGENTLS_MODEL="claude-sonnet-5-5",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    return environment


@dataclass
class Harness:
    agent: Agent
    store: Store
    root: Path
    api: MessagesAPIServer
    events: list[Any] = field(default_factory=list)

    def of_type(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    async def wait_for(self, kind: str, count: int = 1, timeout: float = 10.0) -> Any:
        async def poll() -> Any:
            while len(self.of_type(kind)) < count:
                await asyncio.sleep(0.01)
            return self.of_type(kind)[count - 1]

        return await asyncio.wait_for(poll(), timeout)

    def accepted_requests(self) -> list[Any]:
        """Every request the server saw; fails the test if the server rejected any as invalid."""
        rejected = [r for r in self.api.all_requests if r.rejected]
        assert not rejected, f"the server rejected a request: {rejected[0].error}"
        return [r.body for r in self.api.requests]


class HarnessFactory:
    def __init__(self, tmp_path: Path, api: MessagesAPIServer) -> None:
        self.tmp_path = tmp_path
        self.api = api
        self.created: list[Harness] = []

    async def __call__(
        self, settings: dict[str, Any] | None = None, **agent_kwargs: Any
    ) -> Harness:
        root = self.tmp_path / "ws"
        root.mkdir(exist_ok=True)
        store = await Store.open(self.tmp_path / "data" / "agentls.db")
        # bash without the sandbox unless a test asks for it (tests/security/test_sandbox.py):
        # many tests check processes by pid or files outside the workspace.
        base = {"model": "claude-sonnet-5-5", "apiRetryBaseDelayS": 0.01, "sandbox": "off"}
        merged = Settings.model_validate({**base, **(settings or {})})
        url = self.api.url

        def provider(model: str, s: Settings) -> AnthropicProvider:
            return AnthropicProvider(
                api_key="test-key",
                base_url=url,
                max_attempts=s.api_max_attempts,
                base_delay_s=s.api_retry_base_delay_s,
                max_delay_s=s.api_max_retry_delay_s,
                timeout_s=s.api_timeout_s,
                prompt_caching=s.prompt_caching,
            )

        agent = Agent(
            store=store,
            workspace=DiskWorkspace(root, lambda: agent.settings),
            settings=merged,
            provider_factory=provider,
            **agent_kwargs,
        )
        harness = Harness(agent=agent, store=store, root=root, api=self.api)
        agent.subscribe(harness.events.append)
        self.created.append(harness)
        return harness


@pytest.fixture
async def make_harness(tmp_path: Path, api: MessagesAPIServer) -> AsyncIterator[HarnessFactory]:
    factory = HarnessFactory(tmp_path, api)
    yield factory
    for harness in factory.created:
        await harness.agent.aclose()
        await harness.store.close()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compiles the package's bytecode once. Hundreds of tests start `agentls` processes; with
    PYTHONDONTWRITEBYTECODE set (as on this project's machines) none of them writes what it
    compiles, so on a fresh clone each would compile the modules it imports all over again."""
    if figures.is_worker(session.config):
        return
    repository = Path(__file__).resolve().parent.parent
    for package in ("server/agentls", "messages_api", "chat_completions_api"):
        # Not the demo's sample project: the demo copies it for the user as it is.
        compileall.compile_dir(repository / package, quiet=2, rx=re.compile(r"[/\\]sample[/\\]"))


# pytest-xdist (`make pytest` runs the suite in workers): the security and reliability figures
# are counted in the workers and printed once by the controller (tests/figures.py).
def pytest_sessionfinish(session: pytest.Session) -> None:
    if figures.is_worker(session.config):
        session.config.workeroutput["figures"] = figures.worker_counts()  # type: ignore[attr-defined]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    figures.add_worker_counts(getattr(node, "workeroutput", {}).get("figures", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if figures.is_controller(terminalreporter.config):
        figures.print_tables(terminalreporter)
