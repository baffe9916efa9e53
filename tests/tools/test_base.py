"""Tool input as other agents shape it: Claude Code's and opencode's parameter names taken as
aliases, never shown in the schema; errors that name the parameter the tool takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.tools.base import PermissionDenied, ToolError
from agentls.tools.bash import BashTool
from agentls.tools.edit import EditTool
from agentls.tools.glob import GlobTool
from agentls.tools.grep import GrepTool
from agentls.tools.list import ListTool
from agentls.tools.read import ReadTool
from agentls.tools.registry import default_tools
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.tools.conftest import RunTool, ToolTestContext


def test_claude_code_names_are_taken_as_the_tools_parameters() -> None:
    edit = EditTool().parse(
        {"file_path": "a.py", "old_string": "x", "new_string": "y", "replace_all": True}
    )
    assert edit.model_dump() == {
        "path": "a.py",
        "old_string": "x",
        "new_string": "y",
        "replace_all": True,
    }
    opencode = EditTool().parse({"filePath": "a.py", "oldString": "x", "newString": "y"})
    assert (opencode.path, opencode.old_string, opencode.new_string) == ("a.py", "x", "y")  # type: ignore[attr-defined]
    grep = GrepTool().parse({"pattern": "def", "path": "src", "glob": "*.py"})
    assert grep.include == "*.py"  # type: ignore[attr-defined]
    bash = BashTool().parse({"command": "ls", "timeout": 5000})
    assert bash.timeout_ms == 5000  # type: ignore[attr-defined]


def test_aliases_stay_out_of_the_schema_the_model_is_sent() -> None:
    for tool in default_tools():
        properties = tool.schema()["input_schema"].get("properties", {})
        assert properties, tool.name
        assert not {"file_path", "filePath", "oldString", "subagent_type"} & set(properties)


def test_an_alias_given_with_its_parameter_is_refused_naming_both() -> None:
    with pytest.raises(ToolError) as caught:
        ReadTool().parse({"file_path": "a.py", "path": "b.py"})
    assert "file_path: the same as path" in str(caught.value)


def test_an_unknown_parameter_names_what_the_tool_takes() -> None:
    with pytest.raises(ToolError) as caught:
        ReadTool().parse({"filename": "a.py"})
    message = str(caught.value)
    assert "path: required parameter missing" in message
    assert "filename: not a parameter of read" in message
    assert "its parameters are path (optional: offset, limit)" in message


def test_a_claude_code_description_label_is_dropped_where_the_tool_has_none() -> None:
    bash = BashTool().parse({"command": "make test", "description": "Run the tests"})
    assert bash.model_dump() == {"command": "make test", "timeout_ms": None}


def test_the_title_reads_an_aliased_path() -> None:
    assert ReadTool().title({"file_path": "src/a.py"}) == "read src/a.py"


async def test_a_file_path_read_through_the_loop_returns_the_file(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "notes.txt").write_text("the answer is 42\n")
    api.enqueue(reply(tool_use("read", {"file_path": "notes.txt"})))
    api.enqueue(reply(text("done")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "read it")
    sent: list[Any] = h.accepted_requests()[1]["messages"][-1]["content"]
    result = next(b for b in sent if b.get("type") == "tool_result")
    assert not result.get("is_error")
    assert "the answer is 42" in str(result["content"])


async def test_each_path_tool_asks_one_question_naming_the_path_as_the_model_sees_it(
    ctx: ToolTestContext, run: RunTool, root: Path, tmp_path: Path
) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    await run(ReadTool(), path="src/app.py")
    await run(ListTool(), path="src")
    await run(GlobTool(), pattern="*.py", path="src")
    await run(GrepTool(), pattern="hi", path="src")
    asked = [(q.tool, q.subject, q.title, q.path, q.outside_workspace) for q in ctx.queries]
    assert asked == [
        ("read", "src/app.py", "Read src/app.py", root / "src" / "app.py", False),
        ("list", "src", "List src", root / "src", False),
        ("glob", "src", "Find *.py in src", root / "src", False),
        ("grep", "src", "Search src for hi", root / "src", False),
    ]
    assert ctx.queries[0].input == {"path": "src/app.py"}  # as the model gave it
    # A directory outside the workspace that a rule opens: named by its absolute path.
    elsewhere = (tmp_path / "elsewhere").resolve()
    elsewhere.mkdir()
    ctx.open_outside.append(elsewhere)
    await run(ListTool(), path=str(elsewhere))
    last = ctx.queries[-1]
    assert (last.subject, last.outside_workspace) == (str(elsewhere), True)


async def test_a_refused_path_question_stops_the_tool(ctx: ToolTestContext, run: RunTool) -> None:
    ctx.deny_feedback = "not that one"
    with pytest.raises(PermissionDenied, match="not that one"):
        await run(ListTool(), path=".")
