"""Claude Code's agents and commands from the terminal, as separate processes: `agentls commands`
lists the user's and, once `agentls trust` trusted the workspace, its .claude/commands (one in a
subfolder by its name and as /folder:name); `agentls run "/folder:name args"` sends it filled."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from messages_api import MessagesAPIServer, reply, text
from tests.cli.test_cli import agentls
from tests.session.claude_support import SETUP


@pytest.fixture
def claude_env(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    home = tmp_path / "claude-user-home"
    shutil.copytree(SETUP / "home", home)
    return {**env, "CLAUDE_CONFIG_DIR": str(home / ".claude")}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(SETUP / "workspace", root)
    return root


def test_claude_code_commands_are_listed_and_run(
    api: MessagesAPIServer, claude_env: dict[str, str], workspace: Path
) -> None:
    untrusted = agentls("commands", "--cwd", str(workspace), "--json", env=claude_env)
    assert untrusted.returncode == 0, untrusted.stderr
    names = {c["name"]: c for c in json.loads(untrusted.stdout)}
    assert names["fix-issue"]["source"] == "user"
    assert "frontend:component" not in names
    plain = agentls("commands", "--cwd", str(workspace), env=claude_env)
    assert ".claude/commands are not used: this workspace is not trusted" in plain.stderr

    trusted = agentls("trust", str(workspace), env=claude_env)
    assert trusted.returncode == 0, trusted.stderr
    listed = agentls("commands", "--cwd", str(workspace), "--json", env=claude_env)
    names = {c["name"]: c for c in json.loads(listed.stdout)}
    assert names["frontend:component"]["source"] == "workspace"
    assert "component" in names

    api.enqueue(reply(text("Made it.")))
    done = agentls("run", "--cwd", str(workspace), "/frontend:component Card title", env=claude_env)
    assert done.returncode == 0, done.stderr
    sent = json.dumps(api.requests[0].body["messages"][-1]["content"])
    assert "Create a React component named Card in src/components/Card.tsx" in sent
    assert api.requests[0].body["model"] == "claude-haiku-5-5"


def test_a_commands_bash_commands_run_first_and_show_as_bash_calls(
    api: MessagesAPIServer, claude_env: dict[str, str], workspace: Path
) -> None:
    subprocess.run(["git", "init", "-q", "-b", "feature/login", str(workspace)], check=True)
    (workspace / "login.py").write_text("def login(): ...\n")
    api.enqueue(reply(text("You are adding a login.")))
    done = agentls("run", "--cwd", str(workspace), "/branch-summary", env=claude_env)
    assert done.returncode == 0, done.stderr
    assert "[+] git branch --show-current: feature/login" in done.stdout
    assert "[+] git status --short: " in done.stdout
    sent = api.requests[0].body["messages"][-1]["content"]
    prompt = sent if isinstance(sent, str) else "\n".join(b.get("text", "") for b in sent)
    assert "- Current branch: [output of `git branch --show-current`" in prompt
    assert "feature/login" in prompt and "?? login.py" in prompt
    assert "!`" not in prompt


def test_a_trusted_second_folders_commands_run_and_an_untrusted_ones_never(
    api: MessagesAPIServer, claude_env: dict[str, str], tmp_path: Path
) -> None:
    app, ops, scratch = tmp_path / "app", tmp_path / "ops", tmp_path / "scratch"
    for folder, name, body in [
        (app, "noop", "Nothing"),
        (ops, "deploy", "---\ndescription: Deploy\n---\nDeploy to $1 after checking it."),
        (scratch, "wipe", "---\nallowed-tools: Bash\n---\nWiped: !`touch wiped`"),
    ]:
        (folder / ".claude" / "commands").mkdir(parents=True)
        (folder / ".claude" / "commands" / f"{name}.md").write_text(body)
    assert agentls("trust", str(ops), env=claude_env).returncode == 0
    folders = ["--cwd", str(app), "--folder", str(ops), "--folder", str(scratch)]
    api.enqueue(reply(text("Deployed.")))
    done = agentls("run", *folders, "/deploy staging", env=claude_env)
    assert done.returncode == 0, done.stderr
    sent = json.dumps(api.requests[0].body["messages"][-1]["content"])
    assert "Deploy to staging after checking it." in sent
    refused = agentls("run", *folders, "--yes", "/wipe", env=claude_env)
    assert refused.returncode != 0 and "unknown command /wipe" in refused.stderr
    assert len(api.requests) == 1
    assert not any((f / "wiped").exists() for f in (app, ops, scratch))
