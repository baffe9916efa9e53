from __future__ import annotations

from typing import Any

import pytest

from agentls.tools.base import Tool, ToolContext, ToolInput, ToolResult
from agentls.tools.registry import ToolRegistry, default_registry, default_tools

NAMES = [
    "read",
    "write",
    "edit",
    "glob",
    "grep",
    "list",
    "bash",
    "webfetch",
    "outline",
    "symbols",
    "definition",
    "type_definition",
    "implementation",
    "references",
    "hover",
    "callers",
    "callees",
    "rename",
    "code_actions",
    "apply_code_action",
    "skill",
    "todowrite",
    "ask_user",
    "exit_plan",
    "task",
]


class EchoInput(ToolInput):
    text: str


class EchoTool(Tool):
    name = "echo"
    description = "Echo the text back."
    input_model = EchoInput
    read_only = True

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult(params.text)


def test_default_tools_and_schemas() -> None:
    assert [t.name for t in default_tools()] == NAMES
    registry = default_registry()
    schemas = registry.schemas()
    assert [s["name"] for s in schemas] == NAMES
    assert schemas == default_registry().schemas()  # stable
    for schema in schemas:
        assert set(schema) == {"name", "description", "input_schema"}
        assert len(schema["description"]) > 80
        assert schema["input_schema"]["type"] == "object"
        assert schema["input_schema"].get("additionalProperties") is False
    by_name = {s["name"]: s["input_schema"] for s in schemas}
    assert by_name["read"]["required"] == ["path"]
    assert set(by_name["read"]["properties"]) == {"path", "offset", "limit"}
    assert set(by_name["write"]["properties"]) == {"path", "content"}
    assert set(by_name["edit"]["properties"]) == {"path", "old_string", "new_string", "replace_all"}
    assert set(by_name["glob"]["properties"]) == {"pattern", "path"}
    assert set(by_name["grep"]["properties"]) == {"pattern", "path", "include"}
    assert set(by_name["list"]["properties"]) == {"path"}
    assert set(by_name["bash"]["properties"]) == {"command", "timeout_ms"}
    assert set(by_name["webfetch"]["properties"]) == {"url", "format", "timeout_s"}
    assert by_name["webfetch"]["required"] == ["url"]
    assert set(by_name["task"]["properties"]) == {"description", "prompt", "agent"}
    # task runs beside its neighbours (its sub-agent's own tools are read-only by default).
    read_only = {t.name for t in default_tools() if t.read_only} - {"task"}
    assert read_only == {
        "read",
        "glob",
        "grep",
        "list",
        "webfetch",
        "symbols",
        "definition",
        "references",
        "hover",
        "callers",
        "outline",
        "type_definition",
        "implementation",
        "callees",
        "code_actions",
    }


def test_register_and_lookup() -> None:
    registry = default_registry()
    registry.register(EchoTool())
    assert registry.names()[-1] == "echo"
    assert registry.get("echo") is registry["echo"]
    assert "echo" in registry and registry.get("nope") is None
    assert registry.schemas()[-1]["name"] == "echo"
    with pytest.raises(ValueError):
        registry.register(EchoTool())
    registry.register(EchoTool(), replace=True)
    assert len(registry) == len(NAMES) + 1


def test_registry_from_a_list() -> None:
    registry = ToolRegistry([EchoTool()])
    assert registry.names() == ["echo"]
    assert [t.name for t in registry] == ["echo"]
    registry.unregister("echo")
    assert registry.schemas() == []
