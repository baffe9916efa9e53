"""`agentls skills` lists what the agent can load; `agentls trust` on a workspace that has skills
but no .agentls/config.json makes its skills count."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from messages_api import MessagesAPIServer, reply, text
from tests.cli.test_cli import agentls

FIXTURES = Path(__file__).parent.parent / "fixtures" / "skills"


def test_skills_are_listed_and_a_workspaces_count_once_trusted(
    env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "home", home)
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "workspace", root)
    environment = {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    before = agentls("skills", env=environment, cwd=root)
    assert before.returncode == 0
    assert "release-notes  (user:" in before.stdout and "Bash(python3:*), Read" in before.stdout
    assert "commit-style" in before.stdout and "api-style" not in before.stdout
    assert "do not count until you trust it" in before.stderr
    trusted = agentls("trust", env=environment, cwd=root)
    assert trusted.returncode == 0, trusted.stderr
    assert (root / ".agentls" / "config.json").read_text() == "{}\n"
    assert "Its skills now count: api-style" in trusted.stdout
    after = agentls("skills", "--json", env=environment, cwd=root)
    listed = json.loads(after.stdout)
    assert [s["name"] for s in listed["skills"]] == ["api-style", "commit-style", "release-notes"]
    assert (
        "broken/SKILL.md" in listed["problems"][0]
        and "not valid YAML (line" in listed["problems"][0]
    )


def test_a_skill_runs_by_its_name_as_a_command(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "home", home)
    root = tmp_path / "ws"
    root.mkdir()
    environment = {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    listed = agentls("commands", env=environment, cwd=root)
    assert "/release-notes" in listed.stdout and "Skill: Write release notes" in listed.stdout
    api.enqueue(reply(text("Loading it.")))
    ran = agentls("run", "/release-notes for v2.1", env=environment, cwd=root)
    assert ran.returncode == 0, ran.stderr
    sent = json.dumps(api.requests[-1].body["messages"][-1]["content"])
    assert 'Use the skill \\"release-notes\\"' in sent and "for v2.1" in sent
