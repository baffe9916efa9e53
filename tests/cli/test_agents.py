"""`agentls agents` lists the sub-agent types with the file each comes from, as a separate
process: the user's Claude Code agents, a workspace's only once `agentls trust` trusted it (then
its file wins a name), the `agents` setting's, and the files it could not use."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.test_cli import agentls
from tests.session.claude_support import SETUP


def test_agent_types_are_listed_with_their_files_and_a_workspaces_once_trusted(
    env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "claude-user-home"
    shutil.copytree(SETUP / "home", home)
    root = tmp_path / "ws"
    shutil.copytree(SETUP / "workspace", root)
    environment = {**env, "CLAUDE_CONFIG_DIR": str(home / ".claude")}

    before = agentls("agents", "--cwd", str(root), env=environment)
    assert before.returncode == 0, before.stderr
    user_reviewer = home / ".claude" / "agents" / "reviewer.md"
    assert f"reviewer  (user: {user_reviewer})" in before.stdout
    assert "general  (builtin)" in before.stdout
    assert "docs-writer" not in before.stdout
    assert "notebook-helper.md: it names the tool NotebookEdit" in before.stderr
    assert ".claude/agents" in before.stderr and "not trusted" in before.stderr

    assert agentls("trust", str(root), env=environment).returncode == 0
    config = tmp_path / "config" / "agentls"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.json").write_text(
        json.dumps({"agents": {"planner": {"description": "Plans", "tools": ["read"]}}})
    )
    after = agentls("agents", "--cwd", str(root), "--json", env=environment)
    assert after.returncode == 0, after.stderr
    rows = {row["name"]: row for row in json.loads(after.stdout)["agents"]}
    assert rows["reviewer"]["source"] == "workspace"
    assert rows["reviewer"]["file"] == str(root / ".claude" / "agents" / "reviewer.md")
    assert rows["reviewer"]["tools"] == "read, grep, glob, bash"
    assert rows["reviewer"]["model"] == "sonnet"
    assert rows["docs-writer"]["file"] == str(root / ".opencode" / "agent" / "docs-writer.md")
    assert rows["debugger"]["tools"] == "the session's tools"
    assert (rows["planner"]["source"], rows["planner"]["file"]) == ("setting", None)
