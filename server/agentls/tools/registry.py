"""The tool set: name -> Tool, and the `tools` list sent to the model in a stable order."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from agentls.tools.apply_code_action import ApplyCodeActionTool
from agentls.tools.ask_user import AskUserTool
from agentls.tools.base import Tool
from agentls.tools.bash import BashTool
from agentls.tools.callees import CalleesTool
from agentls.tools.callers import CallersTool
from agentls.tools.code_actions import CodeActionsTool
from agentls.tools.definition import DefinitionTool
from agentls.tools.edit import EditTool
from agentls.tools.exit_plan import ExitPlanTool
from agentls.tools.glob import GlobTool
from agentls.tools.grep import GrepTool
from agentls.tools.hover import HoverTool
from agentls.tools.implementation import ImplementationTool
from agentls.tools.list import ListTool
from agentls.tools.outline import OutlineTool
from agentls.tools.read import ReadTool
from agentls.tools.references import ReferencesTool
from agentls.tools.rename import RenameTool
from agentls.tools.skill import SkillTool
from agentls.tools.symbols import SymbolsTool
from agentls.tools.task import TaskTool
from agentls.tools.todowrite import TodoWriteTool
from agentls.tools.type_definition import TypeDefinitionTool
from agentls.tools.webfetch import WebFetchTool
from agentls.tools.write import WriteTool


def default_tools() -> list[Tool]:
    """The built-in tools, in the order the model sees them."""
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        GlobTool(),
        GrepTool(),
        ListTool(),
        BashTool(),
        WebFetchTool(),
        # Language intelligence (agentls.language): the workspace's language servers.
        OutlineTool(),
        SymbolsTool(),
        DefinitionTool(),
        TypeDefinitionTool(),
        ImplementationTool(),
        ReferencesTool(),
        HoverTool(),
        CallersTool(),
        CalleesTool(),
        RenameTool(),
        CodeActionsTool(),
        ApplyCodeActionTool(),
        # The session's own: the todo list, a question to the user, and leaving plan mode.
        SkillTool(),
        TodoWriteTool(),
        AskUserTool(),
        ExitPlanTool(),
        # A sub-agent in a child session (session/subagents.py).
        TaskTool(),
    ]


class ToolRegistry:
    """Tools by name, kept in registration order (the order of `schemas()`)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        # Built once: pydantic's schema generation costs milliseconds, and it runs every step.
        self._schemas: list[dict[str, Any]] | None = None
        # The names set_extra added, in order.
        self._extra: list[str] = []
        # offered(hidden): the schemas without some tools, by the names left out.
        self._offered: dict[frozenset[str], list[dict[str, Any]]] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        """Add a tool. A name already taken is an error unless replace=True (which keeps the
        tool's place in the order)."""
        if tool.name in self._tools and not replace:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._changed()

    def _changed(self) -> None:
        self._schemas = None
        self._offered = {}

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)
        self._changed()

    def set_extra(self, tools: Iterable[Tool]) -> bool:
        """Replace the tools added by the previous set_extra (MCP servers' tools) with these,
        after every other tool, sorted by name: the built-ins' schemas keep their place, so
        prompt caching survives a server being added. Whether the tool set changed."""
        new = sorted(tools, key=lambda tool: tool.name)
        if [t.name for t in new] == self._extra and all(self._tools.get(t.name) is t for t in new):
            return False
        for name in self._extra:
            self._tools.pop(name, None)
        self._extra = []
        for tool in new:
            if tool.name not in self._tools:
                self._tools[tool.name] = tool
                self._extra.append(tool.name)
        self._changed()
        return True

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The API `tools` list: one {name, description, input_schema} per tool, in order."""
        if self._schemas is None:
            self._schemas = [tool.schema() for tool in self._tools.values()]
        # A new list each time (callers may replace entries); the dicts are shared, not mutated.
        return list(self._schemas)

    def offered(self, hidden: frozenset[str]) -> list[dict[str, Any]]:
        """The `tools` list of one request: schemas() without the tools named in `hidden` (those
        that cannot work there, session/offer.py), in the same order. Kept per `hidden`, so a
        step whose offer did not change sends the same list (the prompt cache's prefix)."""
        if not hidden:
            return self.schemas()
        kept = self._offered.get(hidden)
        if kept is None:
            kept = [s for s in self.schemas() if s.get("name") not in hidden]
            self._offered[hidden] = kept
        return list(kept)


def default_registry() -> ToolRegistry:
    return ToolRegistry(default_tools())
