"""Whether a headless language server runs in the sandbox does not depend on which tests ran
before: an Agent sets the launcher process-wide (use_launcher), and tests/conftest.py puts it
back after each test and each module. The two tests run in this order (pytest keeps a module's
order)."""

from __future__ import annotations

from agentls.language import headless
from agentls.tools.support.sandbox import language_server_prefix
from tests.conftest import HarnessFactory


async def test_an_agent_runs_headless_servers_in_the_sandbox(
    make_harness: HarnessFactory,
) -> None:
    assert headless._launcher is None
    await make_harness()
    assert headless._launcher is language_server_prefix


def test_the_next_test_starts_without_the_agents_launcher() -> None:
    assert headless._launcher is None
