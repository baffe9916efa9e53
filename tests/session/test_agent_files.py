"""Sub-agent types from the Markdown files users keep for Claude Code and opencode: names, the
prompt, tools mapped from Claude Code's names (none: the session's), model aliases, opencode's
tool switches and modes, which file wins a name, the workspace's only when trusted, and a file
naming a tool agentls lacks refused with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.config import AgentType, Settings, load_settings
from agentls.session.agent_files import ALL_TOOLS, file_agents
from agentls.session.subagents import agent_types
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory
from tests.session.claude_support import claude_setup


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    claude_setup(tmp_path, monkeypatch, workspace)
    return workspace


def test_a_claude_code_agent_keeps_its_prompt_tools_and_model(root: Path) -> None:
    found = file_agents(root, trusted=True)
    reviewer = found.types["reviewer"]
    assert reviewer.description.startswith("Expert code review specialist.")
    assert reviewer.prompt.startswith("You are a senior code reviewer")
    assert "Provide feedback organized by priority" in reviewer.prompt
    assert reviewer.tools == ["read", "grep", "glob", "bash"]  # Read, Grep, Glob, Bash
    assert reviewer.model == "sonnet"  # resolved when it runs (test_claude_formats.py)
    assert found.files["reviewer"] == root / ".claude" / "agents" / "reviewer.md"
    # No `tools`: the session's tools; no `model`: the session's.
    debugger = found.types["debugger"]
    assert debugger.tools == [ALL_TOOLS] and debugger.model is None


def test_opencode_agents_switch_tools_off_and_primary_ones_are_no_sub_agents(root: Path) -> None:
    found = file_agents(root, trusted=True)
    writer = found.types["docs-writer"]
    assert writer.description == "Writes and maintains project documentation"
    assert writer.model == "anthropic/claude-haiku-4-5"
    assert writer.tools is not None
    assert "bash" not in writer.tools and "webfetch" not in writer.tools
    assert {"read", "edit", "write", "grep"} <= set(writer.tools)  # the rest stay
    assert "build-fast" not in found.types and "build-fast" not in found.problems


def test_a_file_naming_a_tool_agentls_lacks_is_refused_saying_so(root: Path) -> None:
    found = file_agents(root, trusted=True)
    assert "notebook-helper" not in found.types
    problem = found.problems["notebook-helper"]
    assert "notebook-helper.md" in problem and "NotebookEdit, which agentls lacks" in problem


def test_the_workspaces_agents_count_only_when_trusted_and_win_over_the_users(root: Path) -> None:
    untrusted = file_agents(root, trusted=False)
    assert "docs-writer" not in untrusted.types
    assert untrusted.types["reviewer"].prompt == "Review it quickly."  # the user's
    trusted = file_agents(root, trusted=True)
    assert trusted.types["reviewer"].tools == ["read", "grep", "glob", "bash"]  # the workspace's


def test_the_agents_setting_wins_over_a_file_of_the_same_name(root: Path) -> None:
    files = file_agents(root, trusted=True).types
    configured = {"reviewer": AgentType(description="from the setting", tools=["read"])}
    types = agent_types(configured, files)
    assert types["reviewer"].description == "from the setting"
    assert {"general", "debugger", "docs-writer"} <= set(types)


def test_a_workspace_file_linking_out_of_its_folder_is_not_followed(
    root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("---\nname: outsider\n---\nAnything.\n")
    (root / ".claude" / "agents" / "outsider.md").symlink_to(elsewhere)
    assert "outsider" not in file_agents(root, trusted=True).types


def test_front_matter_yaml_cannot_read_is_read_as_claude_code_reads_it(root: Path) -> None:
    agents = root / ".claude" / "agents"
    (agents / "planner.md").write_text(
        "---\nname: planner\ndescription: Use this agent when a change needs a plan. Examples:\n"
        "<example>Context: the user asks for a feature. user: add login</example>\n"
        "tools: Read, Grep\n---\nYou plan.\n"
    )
    (agents / "broken.md").write_text("---\nname: [a\n---\nx\n")
    found = file_agents(root, trusted=True)
    planner = found.types["planner"]
    assert planner.description.endswith("user: add login</example>")
    assert planner.tools == ["read", "grep"]
    assert "broken.md: its name '[a' is not a name" in found.problems["broken"]


def test_settings_without_trust_read_only_the_users_files(root: Path) -> None:
    from agentls.session.agent_files import available_agents

    assert "docs-writer" not in available_agents(Settings(), root).types


# ---- through the loop, against the local Messages API ----------------------------------------

BASE = {"model": "claude-opus-5-5", "apiRetryBaseDelayS": 0.01, "sandbox": "off"}


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools", [])}


def first_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return "\n".join(b["text"] for b in content if b.get("type") == "text")


async def trusted_harness(
    make_harness: HarnessFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Harness:
    h = await make_harness(BASE)
    claude_setup(tmp_path, monkeypatch, h.root)
    h.agent.update_settings(load_settings(h.root, BASE, workspace_trusted=True))
    return h


async def test_a_task_runs_as_the_workspaces_claude_code_agent(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = await trusted_harness(make_harness, tmp_path, monkeypatch)
    task = {"description": "review", "prompt": "Review the last change.", "agent": "reviewer"}
    api.enqueue(reply(tool_use("task", task)), reply(text("No issues.")), reply(text("done")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "review my change")
    parent, child, _ = h.accepted_requests()
    # The task tool tells the model the file's agent by its description.
    [task_tool] = [t for t in parent["tools"] if t["name"] == "task"]
    assert "reviewer: Expert code review specialist" in task_tool["description"]
    assert "debugger: Debugging specialist" in task_tool["description"]
    # Its tools are Claude Code's Read, Grep, Glob, Bash; `model: sonnet` on an Opus session is
    # the newest Sonnet; its body comes before the task's prompt.
    assert tool_names(child) == {"read", "grep", "glob", "bash"}
    assert child["model"] == "claude-sonnet-5-5"
    said = first_text(child)
    assert said.startswith("You are a senior code reviewer")
    assert said.endswith("Review the last change.")


async def test_an_agent_without_tools_gets_the_sessions_and_a_refused_one_says_why(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = await trusted_harness(make_harness, tmp_path, monkeypatch)
    debug = {"description": "debug", "prompt": "Why does it fail?", "agent": "debugger"}
    notebook = {"description": "nb", "prompt": "Fix the notebook.", "agent": "notebook-helper"}
    api.enqueue(
        reply(tool_use("task", debug)),
        reply(text("Found it.")),
        reply(tool_use("task", notebook)),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "fix it")
    parent, child, after_debug, last = h.accepted_requests()
    # The session's tools, but the task tool (one level of sub-agents) and the session's own.
    assert tool_names(child) == tool_names(parent) - {"task", "ask_user"}
    assert {"edit", "write", "bash", "todowrite"} <= tool_names(child)
    assert child["model"] == "claude-opus-5-5"  # inherit
    [result] = [b for b in last["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert result["is_error"]
    assert "Unknown agent 'notebook-helper'" in str(result["content"])
    assert "NotebookEdit, which agentls lacks" in str(result["content"])


def agent_file(folder: Path, name: str, description: str) -> None:
    agents = folder / ".claude" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / f"{name}.md").write_text(f"---\ndescription: {description}\n---\nYou are {name}.\n")


def test_every_trusted_workspace_folders_agents_count_the_first_folder_winning(
    root: Path, tmp_path: Path
) -> None:
    api, web, scratch = (tmp_path / n for n in ("api", "web", "scratch"))
    agent_file(api, "migrator", "Writes database migrations")
    agent_file(api, "reviewer", "The api folder's reviewer")
    agent_file(web, "reviewer", "The web folder's reviewer")
    agent_file(web, "stylist", "Fixes CSS")
    agent_file(scratch, "intruder", "From a folder nobody trusted")
    found = file_agents(root, True, [(api, True), (web, True), (scratch, False)])
    assert found.types["migrator"].description == "Writes database migrations"
    assert found.files["stylist"] == web / ".claude" / "agents" / "stylist.md"
    assert "intruder" not in found.types  # an untrusted folder's files never count
    # A name in several folders: the first folder's (the root's), else the earlier folder's.
    assert found.files["reviewer"] == root / ".claude" / "agents" / "reviewer.md"
    without_root = file_agents(root, False, [(api, True), (web, True)])
    assert without_root.types["reviewer"].description == "The api folder's reviewer"
