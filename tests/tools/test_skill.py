"""The skill tool end to end (`agentls run` against the local Messages API): the system prompt
lists the user's skills, the model loads one, runs its script as its allowed-tools allow without
anyone to ask, and reads a file of it; the next turn's same command is asked about again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from messages_api import MessagesAPIServer, reply, text, tool_use

FIXTURES = Path(__file__).parent.parent / "fixtures" / "skills"


def tool_results(body: dict[str, object]) -> list[dict[str, object]]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [b for b in messages[-1]["content"] if b["type"] == "tool_result"]


def run(env: dict[str, str], root: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "run", "--cwd", str(root), prompt],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def test_a_skill_is_listed_loaded_and_its_allowed_script_runs_for_that_turn(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "home", home)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "CHANGES.md").write_text("one\ntwo\nthree\n")
    skill = home / ".claude" / "skills" / "release-notes"
    script = f"python3 {skill / 'scripts' / 'count_lines.py'} CHANGES.md"
    api.enqueue(
        reply(tool_use("skill", {"name": "release-notes"})),
        reply(tool_use("bash", {"command": script})),
        reply(tool_use("read", {"path": str(skill / "template.md")})),
        reply(text("Notes written.")),
        reply(tool_use("bash", {"command": script})),
        reply(text("Could not.")),
    )
    environment = {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    first = run(environment, root, "release notes please")
    assert first.returncode == 0, first.stderr
    system = json.dumps(api.requests[0].body["system"])
    assert "release-notes: Write release notes" in system
    assert "commit-style" in system
    assert "Count the changed lines" not in system  # only when loaded
    assert "skill" in [t["name"] for t in api.requests[0].body["tools"]]
    loaded = json.dumps(tool_results(api.requests[1].body))
    assert "Count the changed lines" in loaded and "Bash(python3:*)" in loaded
    ran = tool_results(api.requests[2].body)[0]
    assert not ran.get("is_error") and "3 total" in json.dumps(ran)
    read = tool_results(api.requests[3].body)[0]
    assert not read.get("is_error") and "## Release {version}" in json.dumps(read)
    # The next turn did not load the skill: no one at the terminal to ask, so it is refused.
    second = run(environment, root, "count again")
    assert second.returncode == 0, second.stderr
    refused = tool_results(api.requests[5].body)[0]
    assert refused.get("is_error") and "3 total" not in json.dumps(refused)


def test_without_skills_the_tool_and_the_list_are_left_out(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    home = tmp_path / "empty-home"
    home.mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    api.enqueue(reply(text("Hello.")))
    assert run({**env, "HOME": str(home)}, root, "hi").returncode == 0
    assert "skill" not in [t["name"] for t in api.requests[0].body["tools"]]
    assert "Skills" not in json.dumps(api.requests[0].body["system"])
