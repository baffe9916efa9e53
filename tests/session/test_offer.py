"""Which tools a request offers: only those that can work here (issue 27 item 1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentls.config import Settings
from agentls.language import NoLanguages
from agentls.language.headless import HeadlessLanguages
from agentls.session.offer import Offer, denied_outright, languages_described, make_offer
from agentls.session.policy import rules_of
from agentls.session.system_prompt import LANGUAGE_TOOLS, FrontEnd
from agentls.tools.registry import default_registry
from agentls.workspace.protocol import Languages
from tests.tools.navigation_support import basedpyright, pyright, server_settings, shapes_on


class Declared:
    """The methods an editor declared (the Languages protocol's methods(); nothing is asked)."""

    def __init__(self, methods: set[str]) -> None:
        self._methods = frozenset(methods)

    def methods(self, path: Path | None) -> frozenset[str]:
        return self._methods

    async def request(self, method: str, params: dict[str, Any], path: Path | None) -> Any:
        raise AssertionError("nothing is asked to make an offer")

    async def aclose(self) -> None:
        return None


def offer(
    settings: Settings, languages: Languages, front_end: FrontEnd = "terminal", mode: str = "build"
) -> Offer:
    return make_offer(
        default_registry(),
        languages=languages,
        settings=settings,
        rules=rules_of(settings),
        front_end=front_end,
        mode=mode,
    )


def test_no_language_server_hides_the_language_tools() -> None:
    made = offer(Settings(), NoLanguages())
    assert set(LANGUAGE_TOOLS) <= made.hidden
    assert made.surroundings.languages is None
    assert {"read", "edit", "bash", "webfetch", "task"} <= made.surroundings.tools


def test_a_configured_headless_server_offers_them(tmp_path: Path) -> None:
    servers = {"python": {"command": ["jedi-language-server"], "extensions": [".py"]}}
    settings = Settings.model_validate({"languageServers": servers})

    async def read(path: Path) -> str:
        return ""

    made = offer(settings, HeadlessLanguages(tmp_path, lambda: settings, read))
    assert not set(LANGUAGE_TOOLS) & made.hidden
    assert made.surroundings.languages == "python (.py), from languageServers"


def test_the_editors_declared_language_requests_offer_them() -> None:
    declared = Declared({"textDocument/definition", "textDocument/references"})
    made = offer(Settings(), declared, front_end="editor")
    # A tool that asks one method is offered only when the editor declared it.
    asks_one = {
        "outline",
        "type_definition",
        "implementation",
        "callees",
        "code_actions",
        "apply_code_action",
    }
    assert set(LANGUAGE_TOOLS) - asks_one <= made.surroundings.tools
    assert asks_one <= made.hidden
    everything = Declared(
        {
            "textDocument/documentSymbol",
            "textDocument/typeDefinition",
            "textDocument/implementation",
            "callHierarchy/outgoingCalls",
            "textDocument/codeAction",
        }
    )
    assert set(LANGUAGE_TOOLS) <= offer(Settings(), everything, "editor").surroundings.tools
    assert languages_described(declared, Settings(), "editor") == "the editor's language servers"


def test_exit_plan_only_in_plan_mode() -> None:
    assert "exit_plan" in offer(Settings(), NoLanguages()).hidden
    assert "exit_plan" in offer(Settings(), NoLanguages(), mode="plan").surroundings.tools


def test_a_tool_the_rules_deny_outright_is_not_offered() -> None:
    settings = Settings.model_validate({"permissions": {"webfetch": "deny"}})
    assert "webfetch" in offer(settings, NoLanguages()).hidden
    # Denied for some hosts only, or allowed again after: still offered.
    rules = rules_of(
        Settings.model_validate(
            {"permissions": [{"tool": "webfetch", "action": "deny"},
                             {"tool": "webfetch", "pattern": "docs.python.org", "action": "allow"}]}
        )
    )  # fmt: skip
    assert not denied_outright(rules, "webfetch")
    # A blanket "*" deny hides nothing: tools that ask no permission still run.
    assert not denied_outright(
        rules_of(Settings.model_validate({"permissions": {"*": "deny"}})), "todowrite"
    )


def test_the_offered_tool_list_keeps_the_registry_order_and_is_reused() -> None:
    registry = default_registry()
    hidden = frozenset(LANGUAGE_TOOLS)
    first = registry.offered(hidden)
    assert [s["name"] for s in first] == [n for n in registry.names() if n not in hidden]
    assert registry.offered(hidden) == first
    assert registry.offered(frozenset()) == registry.schemas()


def test_ask_user_is_offered_only_where_someone_can_answer() -> None:
    settings = Settings()
    common: dict[str, Any] = {
        "languages": NoLanguages(),
        "settings": settings,
        "rules": rules_of(settings),
        "front_end": "terminal",
        "mode": "build",
    }
    assert "ask_user" in make_offer(default_registry(), **common).surroundings.tools
    unattended = make_offer(default_registry(), attended=False, **common)
    assert "ask_user" in unattended.hidden and "ask_user" not in unattended.surroundings.tools


@pytest.mark.parametrize(
    ("server", "offered"),
    [(pyright, False), (basedpyright, True)],
    ids=["pyright", "basedpyright"],
)
async def test_implementation_is_offered_once_the_running_server_answers_it(
    tmp_path: Path, server: Callable[[], list[str]], offered: bool
) -> None:
    async with shapes_on(tmp_path, server) as ctx:
        settings = server_settings(server())
        languages = ctx.workspace.languages
        # Not started yet: what it offers is not known, so everything is.
        assert "implementation" in offer(settings, languages).surroundings.tools
        await languages.request(
            "textDocument/documentSymbol",
            {"textDocument": {"uri": (tmp_path / "shapes.py").as_uri()}},
            tmp_path / "shapes.py",
        )
        made = offer(settings, languages)
    assert ("implementation" in made.surroundings.tools) is offered
    assert {"outline", "type_definition", "callees"} <= made.surroundings.tools
