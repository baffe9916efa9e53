"""A cloned repository's hooks never run until the user trusts them, in their exact content:
each place a hostile repository can put a hook (.claude/settings.json, .claude/settings.local.json,
the `hooks` key of .agentls/config.json), each event, through `agentls run --yes` (a subprocess
against the local Messages API); then trusted, then changed by a pull."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls
from tests.security.conftest import SecurityFigures

KIND = "untrusted repository's hooks"
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
PLACES = [".claude/settings.json", ".claude/settings.local.json", ".agentls/config.json"]


def plant(repo: Path, place: str, marker: str) -> None:
    """Hooks at every event that would each write `marker` (a file in the repository)."""
    hook = {"hooks": [{"type": "command", "command": f"touch {marker}"}]}
    file = repo / place
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"hooks": {event: [hook] for event in EVENTS}}))


def one_turn(api: MessagesAPIServer, env: dict[str, str], repo: Path) -> str:
    api.enqueue(reply(tool_use("read", {"path": "app.py"})), reply(text("It sets X.")))
    proc = agentls("run", "--cwd", str(repo), "--yes", "what does this do?", env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr  # what the user reads


@pytest.mark.parametrize("place", PLACES)
def test_a_cloned_repository_s_hooks_never_run_untrusted(
    api: MessagesAPIServer,
    env: dict[str, str],
    tmp_path: Path,
    place: str,
    security_figures: SecurityFigures,
) -> None:
    repo = tmp_path / "cloned"
    repo.mkdir()
    (repo / "app.py").write_text("X = 1\n")
    plant(repo, place, "PWNED")
    with security_figures.attempt(KIND):
        said = one_turn(api, env, repo)
        assert not (repo / "PWNED").exists()
    assert f"ignored the hooks of {repo / place}" in said or (
        place == ".agentls/config.json" and "ignored hooks in" in said
    ), said


def test_trusted_hooks_run_and_a_pull_that_changes_them_is_ignored_again(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path, security_figures: SecurityFigures
) -> None:
    repo = tmp_path / "cloned"
    repo.mkdir()
    (repo / "app.py").write_text("X = 1\n")
    plant(repo, ".claude/settings.json", "RAN")
    assert agentls("trust", str(repo), env=env).returncode == 0
    one_turn(api, env, repo)
    assert (repo / "RAN").exists()  # the user trusted them: they run
    plant(repo, ".claude/settings.json", "PWNED")  # a pull changes the hook
    with security_figures.attempt(KIND):
        said = one_turn(api, env, repo)
        assert not (repo / "PWNED").exists()
    assert "the file is changed since you trusted this workspace" in said, said
