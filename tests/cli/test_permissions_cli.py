"""The CLI side of "always": the terminal question names what it allows, [A] keeps it for
every later run in that workspace, and `agentls permissions` lists and revokes those grants (each
command a real process, on a real database in a temporary AGENTLS_DATA_DIR)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.terminal_support import answer_at_terminal
from tests.cli.test_cli import agentls, workspace  # noqa: F401 - fixtures

PROMPT = (
    "Allow bash `git status --porcelain`? [y]es once / [a]lways (Always allow `git status` "
    "commands, this session) / [A]lways, in this project / [e] no, with a note / [n]o: "
)


def run_in_terminal(args: list[str], environment: dict[str, str], answer: str) -> tuple[int, str]:
    """`agentls run` at a pseudo-terminal; types `answer` once the question is on screen."""
    return answer_at_terminal(args, environment, b"[n]o: ", answer.encode() + b"\n")


def tool_result(body: dict[str, Any]) -> dict[str, Any]:
    return next(b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result")


def test_project_always_persists_is_listed_and_revoked(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    api.enqueue(reply(tool_use("bash", {"command": "git status --porcelain"})), reply(text("ok")))
    code, shown = run_in_terminal(["run", "--cwd", str(workspace), "status please"], env, "A")
    assert code == 0, shown
    assert PROMPT in shown

    listed = agentls("permissions", "--cwd", str(workspace), env=env)
    assert listed.returncode == 0, listed.stderr
    assert f"Project grants for {workspace}" in listed.stdout
    assert "  1. Always allow `git status` commands" in listed.stdout
    as_json = json.loads(agentls("permissions", "--cwd", str(workspace), "--json", env=env).stdout)
    assert [(g["number"], g["tool"], g["pattern"], g["exact"]) for g in as_json] == [
        (1, "bash", "git status", False)
    ]
    # Per workspace root: another one has none.
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = agentls("permissions", "--cwd", str(other), env=env)
    assert elsewhere.returncode == 0 and f"No project grants for {other}." in elsewhere.stdout

    # A later run in the workspace (no terminal, no --yes: any question would be refused).
    api.enqueue(reply(tool_use("bash", {"command": "git status"})), reply(text("ok")))
    later = agentls("run", "--cwd", str(workspace), "again", env=env)
    assert later.returncode == 0, later.stderr
    assert "--yes" not in tool_result(api.requests[-1].body)["content"]

    # Bad numbers: one clear line, no traceback, nothing removed.
    for bad in ("2", "0", "-1"):
        refused = agentls("permissions", "--cwd", str(workspace), "--revoke", bad, env=env)
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            f"agentls: no project grant number {bad} for {workspace} (there are 1, numbered 1 "
            "to 1; `agentls permissions` lists them)"
        ]
    not_a_number = agentls("permissions", "--revoke", "first", env=env)
    assert not_a_number.returncode == 2 and "invalid int value" in not_a_number.stderr
    assert "Traceback" not in not_a_number.stderr

    revoked = agentls("permissions", "--cwd", str(workspace), "--revoke", "1", env=env)
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout.strip() == f"Revoked 1: Always allow `git status` commands ({workspace})"
    empty = agentls("permissions", "--cwd", str(workspace), env=env)
    assert f"No project grants for {workspace}." in empty.stdout
    none_left = agentls("permissions", "--cwd", str(workspace), "--revoke", "1", env=env)
    assert none_left.returncode == 2 and "there are none" in none_left.stderr

    # Revoked: the same command asks again (and, with no terminal, is refused).
    api.enqueue(reply(tool_use("bash", {"command": "git status"})), reply(text("ok")))
    agentls("run", "--cwd", str(workspace), "once more", env=env)
    refusal = tool_result(api.requests[-1].body)
    assert refusal["is_error"] and "not at a terminal" in refusal["content"]


@pytest.mark.parametrize(("answer", "kept"), [("a", "session"), ("y", None), ("n", None)])
def test_the_terminal_answers(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
    answer: str,
    kept: str | None,
) -> None:
    api.enqueue(reply(tool_use("bash", {"command": "git status --porcelain"})), reply(text("ok")))
    code, shown = run_in_terminal(["run", "--cwd", str(workspace), "go"], env, answer)
    assert code == 0, shown
    assert PROMPT in shown
    grants = agentls("permissions", "--cwd", str(workspace), "--json", env=env)
    assert json.loads(grants.stdout) == []  # never a project grant
    db = Path(env["AGENTLS_DATA_DIR"]) / "agentls.db"
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT tool, pattern, exact FROM permission_grants").fetchall()
    conn.close()
    assert rows == ([("bash", "git status", 0)] if kept == "session" else [])


def test_no_always_choices_when_always_is_not_offered(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    api.enqueue(reply(tool_use("bash", {"command": '"$CMD" hi'})), reply(text("ok")))
    code, shown = run_in_terminal(["run", "--cwd", str(workspace), "go"], env, "y")
    assert code == 0, shown
    assert 'Allow bash `"$CMD" hi`? [y]es once / [e] no, with a note / [n]o: ' in shown
    assert "[a]lways" not in shown
