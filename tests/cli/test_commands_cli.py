"""`agentls run "/NAME args"` and `agentls commands`, as separate processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from messages_api import MessagesAPIServer, reply, text
from tests.cli.test_cli import agentls


@pytest.fixture
def workspace(tmp_path: Path, env: dict[str, str]) -> Path:
    root = tmp_path / "ws"
    (root / ".agentls" / "commands").mkdir(parents=True)
    (root / ".agentls" / "commands" / "ship.md").write_text("Ship it")
    (root / "app.py").write_text("X = 1\n")
    user = Path(env["XDG_CONFIG_HOME"]) / "agentls" / "commands"
    user.mkdir(parents=True)
    (user / "review.md").write_text("---\ndescription: Review a file\n---\nReview @$ARGUMENTS")
    return root


def test_run_a_command_and_list_them(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text("Looks right.")))
    done = agentls("run", "--cwd", str(workspace), "/review app.py", env=env)
    assert done.returncode == 0, done.stderr
    assert "Looks right." in done.stdout
    content = api.requests[0].body["messages"][-1]["content"]
    sent = json.dumps(content)
    assert "Review @app.py" in sent and "X = 1" in sent  # the file attached

    listed = agentls("commands", "--cwd", str(workspace), "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [(c["name"], c["source"]) for c in json.loads(listed.stdout)] == [
        ("clear", "builtin"),
        ("compact", "builtin"),
        ("model", "builtin"),
        ("review", "user"),
    ]
    plain = agentls("commands", "--cwd", str(workspace), env=env)
    assert "/review" in plain.stdout and "Review a file" in plain.stdout
    assert "not trusted" in plain.stderr  # the workspace's /ship is not used


def test_run_an_unknown_command_is_a_usage_error_and_nothing_is_sent(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    done = agentls("run", "--cwd", str(workspace), "/ship now", env=env)
    assert done.returncode == 2
    assert "unknown command /ship" in done.stderr and "/review" in done.stderr
    assert api.all_requests == []
    model = agentls("run", "--cwd", str(workspace), "/model", env=env)
    assert model.returncode == 0 and "The model is claude-sonnet-5-5." in model.stdout
