"""`agentls run "/NAME args"` for a command whose front matter names an agent type, and
`agentls commands` saying it, as separate processes."""

from __future__ import annotations

import json
from pathlib import Path

from messages_api import MessagesAPIServer, reply, text
from tests.cli.test_cli import agentls


def test_run_a_command_as_its_agent_type_and_list_it(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    home = Path(env["XDG_CONFIG_HOME"]) / "agentls"
    (home / "commands").mkdir(parents=True)
    agents = {"agents": {"auditor": {"prompt": "Audit only.", "tools": ["grep"]}}}
    (home / "config.json").write_text(json.dumps(agents))
    (home / "commands" / "audit.md").write_text(
        "---\ndescription: Audit the code\nagent: auditor\n---\nAudit $ARGUMENTS"
    )
    (home / "commands" / "lost.md").write_text("---\nagent: nobody\n---\nGo")
    api.enqueue(reply(text("Nothing found.")))
    done = agentls("run", "--cwd", str(root), "/audit the parser", env=env)
    assert done.returncode == 0, done.stderr
    assert "Nothing found." in done.stdout
    [request] = api.requests
    assert [t["name"] for t in request.body["tools"]] == ["grep"]
    assert request.body["messages"][-1]["content"][0]["text"] == "Audit only.\n\nAudit the parser"

    refused = agentls("run", "--cwd", str(root), "/lost", env=env)
    assert refused.returncode == 2
    assert "'nobody'" in refused.stderr and "auditor" in refused.stderr
    assert len(api.all_requests) == 1

    listed = json.loads(agentls("commands", "--cwd", str(root), "--json", env=env).stdout)
    assert {c["name"]: c["agent"] for c in listed}["audit"] == "auditor"
    plain = agentls("commands", "--cwd", str(root), env=env).stdout
    assert "Audit the code  (user, as auditor)" in plain
