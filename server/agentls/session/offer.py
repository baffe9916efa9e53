"""What one request offers the model: the tools that can work here, and what the system prompt
says of its circumstances (who answers the language tools, what checks an edit).

A tool is left out of the request's tool list when it cannot do its job: the language tools when
no language server covers the workspace (neither the editor's, in `serve`, nor one configured in
`languageServers`), `exit_plan` outside plan mode, `ask_user` where no one can answer (`agentls run` without a
terminal), and any tool the permission rules deny outright
(a rule naming the tool without a pattern, with nothing after it that allows some of its calls:
`{"webfetch": "deny"}` keeps webfetch out). A language tool that asks one method no server can
answer is left out too (its `language_method`: `implementation` where only pyright runs, which
offers none; a headless server not started yet counts as answering every method until it has
said what it offers). MCP servers' tools are in the registry only while a
server offers them. A tool left out still answers a call with its own error (the model may name
it from an older step), so the registry is not changed, only the list sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentls.config import Settings
from agentls.permission.rules import PermissionRules, rules_tool, tool_matches
from agentls.session.system_prompt import LANGUAGE_TOOLS, FrontEnd, Surroundings
from agentls.tools.registry import ToolRegistry
from agentls.workspace.protocol import Languages

PLAN_ONLY = frozenset({"exit_plan"})
ASKS_USER = frozenset({"ask_user"})


@dataclass(frozen=True)
class Offer:
    """The tools left out of one request, and what its system prompt says of the rest."""

    hidden: frozenset[str]
    surroundings: Surroundings


def languages_described(
    languages: Languages, settings: Settings, front_end: FrontEnd
) -> str | None:
    """Who answers the language tools here, in a few words; None: nothing does."""
    try:
        methods = languages.methods(None)
    except Exception:  # noqa: BLE001 - a broken Languages offers nothing
        methods = frozenset()
    configured = settings.language_servers or {}
    if not methods and not configured:
        return None
    said: list[str] = []
    # The editor declared language requests of its own (in `serve`); a headless configuration
    # alone answers workspace/symbol only.
    if front_end == "editor" and methods - ({"workspace/symbol"} if configured else set()):
        said.append("the editor's language servers")
    if configured:
        listed = ", ".join(
            f"{name} ({' '.join(config.extensions)})" for name, config in sorted(configured.items())
        )
        said.append(f"{listed}, from languageServers")
    return "; ".join(said) or None


def unanswered(registry: ToolRegistry, languages: Languages, settings: Settings) -> set[str]:
    """The tools whose `language_method` nothing answers: neither the editor (its declared
    methods) nor a configured headless server (asked for a file of each of its extensions)."""
    try:
        answered = set(languages.methods(None))
        for config in (settings.language_servers or {}).values():
            for extension in config.extensions:
                answered |= languages.methods(Path(f"any{extension}"))
    except Exception:  # noqa: BLE001 - a broken Languages answers nothing
        answered = set()
    return {
        tool.name
        for tool in registry
        if isinstance(method := getattr(tool, "language_method", None), str)
        and method not in answered
    }


def denied_outright(rules: PermissionRules, tool: str) -> bool:
    """Whether every call of `tool` is denied: the last rule naming it (or every tool, "*")
    without a pattern denies, and no rule after it allows or asks for some of its calls. A
    blanket `{"*": "deny"}` alone hides nothing (tools that ask no permission run regardless)."""
    name = rules_tool(tool)
    state: str | None = None
    for rule in rules.rules:
        if not tool_matches(rule.tool, name):
            continue
        if rule.pattern is None:
            if rule.tool != "*" or rule.action != "deny":
                state = rule.action
        elif rule.action != "deny" and state == "deny":
            state = "partly"
    return state == "deny"


def make_offer(
    registry: ToolRegistry,
    *,
    languages: Languages,
    settings: Settings,
    rules: PermissionRules,
    front_end: FrontEnd,
    mode: str,
    attended: bool = True,
    skills: str | None = None,
) -> Offer:
    """The offer of one request of a session in `mode`; `attended`: someone can answer a question
    (ask_user is left out when no one can); `skills`: the list of skills the prompt gives (the
    skill tool is left out without one)."""
    described = languages_described(languages, settings, front_end)
    hidden: set[str] = set() if attended else set(ASKS_USER)
    if described is None:
        hidden.update(LANGUAGE_TOOLS)
    else:
        hidden.update(unanswered(registry, languages, settings))
    if mode != "plan":
        hidden.update(PLAN_ONLY)
    if not skills:
        hidden.add("skill")
    names: Iterable[str] = registry.names()
    hidden.update(name for name in names if denied_outright(rules, name))
    offered = frozenset(n for n in registry.names() if n not in hidden)
    return Offer(
        hidden=frozenset(n for n in hidden if n in registry),
        surroundings=Surroundings(
            tools=offered,
            languages=described,
            verify_commands=bool(settings.verify_commands),
            skills=skills,
        ),
    )
