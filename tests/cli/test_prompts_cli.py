"""What `agentls run` sends the model, captured from real requests (the anthropic SDK against the
local Messages API): the tools offered where they work, a sub-agent's own prompt, and an edit's
check that says what it checked (issue 27)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls, workspace

__all__ = ["workspace"]  # the fixture

LANGUAGE_TOOLS = {"symbols", "definition", "references", "hover", "callers", "rename"}


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools", [])}


def system_text(body: dict[str, Any]) -> str:
    return "".join(block["text"] for block in body["system"])


def accepted(api: MessagesAPIServer) -> list[dict[str, Any]]:
    rejected = [r for r in api.all_requests if r.rejected]
    assert not rejected, rejected[0].error
    return [r.body for r in api.requests]


def test_run_without_language_servers_offers_no_language_tools(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text("Hello.")))
    proc = agentls("run", "--cwd", str(workspace), "hi", env=env)
    assert proc.returncode == 0, proc.stderr
    [body] = accepted(api)
    offered = tool_names(body)
    assert not offered & LANGUAGE_TOOLS
    assert {"read", "edit", "write", "grep", "bash"} <= offered
    assert "exit_plan" not in offered  # build mode: nothing to exit
    assert "ask_user" not in offered  # no terminal here: no one could answer
    system = system_text(body)
    assert "Language servers: none here" in system
    # Nothing in the prompt sends the model to tools it does not have, or to an editor.
    assert "`symbols`" not in system and "`definition`" not in system
    assert "editor" not in system
    assert "from a terminal (`agentls run`)" in system
    assert "syntax check of Python and JSON files only" in system
    assert "Commit, push, tag or open pull requests only when the user asks" in system


def test_run_with_a_configured_language_server_offers_the_language_tools(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    config = tmp_path / "config" / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    servers = {"python": {"command": ["jedi-language-server"], "extensions": [".py"]}}
    config.write_text(json.dumps({"languageServers": servers}))
    api.enqueue(reply(text("Hello.")))
    proc = agentls("run", "--cwd", str(workspace), "hi", env=env)
    assert proc.returncode == 0, proc.stderr
    [body] = accepted(api)
    assert LANGUAGE_TOOLS <= tool_names(body)
    system = system_text(body)
    assert "Language servers: python (.py), from languageServers" in system
    assert "Where a language server (python (.py), from languageServers) answers" in system
    assert (
        "use `symbols`, `definition`, `type_definition`, `implementation`, `references`, "
        "`hover`, `callers`, `callees` and `rename`"
    ) in system
    assert "take its `outline`" in system


def test_a_sub_agents_request_carries_its_own_prompt(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    api.enqueue(
        reply(tool_use("task", {"description": "find notes", "prompt": "Read notes.txt"})),
        reply(tool_use("read", {"path": "notes.txt"})),
        reply(text("notes.txt:1 says: remember the milk")),
        reply(text("Milk.")),
    )
    proc = agentls("run", "--cwd", str(workspace), "what do my notes say?", env=env)
    assert proc.returncode == 0, proc.stderr
    parent, child, child_after_read, parent_after_task = accepted(api)
    child_system = system_text(child)
    assert child_system != system_text(parent)
    assert child_system.startswith("You are a sub-agent of agentls, of the agent type general")
    assert "Your final message is the report the caller relays" in child_system
    assert "Your tools are read-only" in child_system
    # None of the main agent's instructions it could not follow.
    for absent in ("todowrite", "`edit`", "Safety and scope", "say what you changed"):
        assert absent not in child_system
    assert tool_names(child) == {"read", "glob", "grep", "list", "webfetch"}
    assert system_text(child_after_read) == child_system  # the same bytes each step (the cache)
    assert system_text(parent_after_task) == system_text(parent)


def test_an_undefined_name_added_under_run_is_not_called_no_new_errors(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    (workspace / "app.py").write_text("def total():\n    return 1\n")
    edit = {"path": "app.py", "old_string": "return 1", "new_string": "return undefined_name"}
    api.enqueue(
        reply(tool_use("read", {"path": "app.py"})),
        reply(tool_use("edit", edit)),
        reply(text("Done.")),
    )
    proc = agentls("run", "--cwd", str(workspace), "--yes", "change it", env=env)
    assert proc.returncode == 0, proc.stderr
    # The request after the edit (the finish gate may send one more after "Done.").
    after = accepted(api)[2]
    [result] = [b for b in after["messages"][-1]["content"] if b["type"] == "tool_result"]
    output = result["content"] if isinstance(result["content"], str) else json.dumps(result)
    assert "return undefined_name" in (workspace / "app.py").read_text(), output
    assert "no new errors" not in output
    assert (
        "Diagnostics (agentls syntax check only: not names, types or tests): "
        "no syntax errors in app.py." in output
    )


def test_under_run_a_configured_language_server_names_what_it_found(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # ruff's language server (`ruff server`): its pyflakes rules see the undefined name.
    ruff = Path(sys.executable).with_name("ruff")
    config = tmp_path / "config" / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    servers = {"python": {"command": [str(ruff), "server"], "extensions": [".py"]}}
    config.write_text(json.dumps({"languageServers": servers}))
    (workspace / "app.py").write_text("def total():\n    return 1\n")
    edit = {"path": "app.py", "old_string": "return 1", "new_string": "return undefined_name"}
    api.enqueue(
        reply(tool_use("read", {"path": "app.py"})),
        reply(tool_use("edit", edit)),
        reply(text("Done.")),
    )
    proc = agentls("run", "--cwd", str(workspace), "--yes", "change it", env=env)
    assert proc.returncode == 0, proc.stderr
    # The request after the edit (the finish gate may send one more after "Done.").
    after = accepted(api)[2]
    [result] = [b for b in after["messages"][-1]["content"] if b["type"] == "tool_result"]
    output = result["content"] if isinstance(result["content"], str) else json.dumps(result)
    assert (
        "Diagnostics (language server, from languageServers): 1 new problem(s) in app.py after "
        "this edit (Ruff: 1 error):\n  line 2: error [Ruff] Undefined name `undefined_name`"
    ) in output
    # The syntax check still says what it is, after the language server's answer.
    assert "Diagnostics (agentls syntax check only: not names, types or tests)" in output
