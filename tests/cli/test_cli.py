"""`agentls run` and `agentls sessions` as separate processes, including a kill -9 mid-turn."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.store import Store
from messages_api import MessagesAPIServer, reply, text, tool_use


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def agentls(
    *args: str, env: dict[str, str], timeout: float = 60, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
        **kwargs,
    )


def test_run_yes_completes_read_edit_bash(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    (workspace / "m.py").write_text("X = 1\n")
    api.enqueue(
        reply(text("Looking."), tool_use("read", {"path": "m.py"})),
        reply(tool_use("edit", {"path": "m.py", "old_string": "X = 1", "new_string": "X = 2"})),
        reply(tool_use("bash", {"command": "cat m.py"})),
        reply(text("X is now 2.")),
    )
    proc = agentls("run", "--cwd", str(workspace), "--yes", "set X to 2", env=env)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "m.py").read_text() == "X = 2\n"
    assert "Looking." in proc.stdout and "X is now 2." in proc.stdout
    lines = [
        line
        for line in proc.stdout.splitlines()
        if line.startswith("[+]") or line.startswith("[x]")
    ]
    assert len(lines) == 3 and all(line.startswith("[+]") for line in lines)
    rejected = [r for r in api.all_requests if r.rejected]
    assert not rejected


def test_run_json_prints_events_and_result(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text("json answer")))
    proc = agentls("run", "--cwd", str(workspace), "--json", "hi", env=env)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[0]["type"] == "turn-start" and "sessionId" in events[0]
    assert events[-1]["type"] == "result" and events[-1]["text"] == "json answer"
    assert events[-1]["finishReason"] == "end_turn"
    assert any(e["type"] == "usage" for e in events)


def test_no_tty_without_yes_refuses_telling_the_model_no_one_can_be_asked(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(tool_use("bash", {"command": "touch made.txt"})), reply(text("ok")))
    proc = agentls("run", "--cwd", str(workspace), "make a file", env=env)
    assert proc.returncode == 0
    assert not (workspace / "made.txt").exists()
    result = [
        b for b in api.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"
    ][0]
    # The model is told no one can be asked and to stop; how to allow it is for the user.
    assert result["is_error"] and "the user is not at a terminal" in result["content"]
    assert "Do not retry" in result["content"] and "Their feedback" not in result["content"]
    assert "--yes" not in result["content"] and "Rerun with --yes" in proc.stderr
    assert "[x]" in proc.stdout


def test_bash_environment_has_no_anthropic_variables(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(
        reply(tool_use("bash", {"command": "env | grep -c ANTHROPIC_ || true"})), reply(text("ok"))
    )
    proc = agentls("run", "--cwd", str(workspace), "--yes", "env", env=env)
    assert proc.returncode == 0, proc.stderr
    result = [
        b for b in api.requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"
    ][0]
    assert result["content"].splitlines()[0].strip() == "0"


def test_sessions_lists_with_usage(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text("one")), reply(text("two")))
    for prompt in ("first prompt", "second prompt"):
        assert agentls("run", "--cwd", str(workspace), prompt, env=env).returncode == 0
    listing = agentls("sessions", "--json", env=env)
    sessions = json.loads(listing.stdout)
    assert [s["title"] for s in sessions] == ["second prompt", "first prompt"]
    assert all(s["usage"]["outputTokens"] > 0 for s in sessions)
    table = agentls("sessions", env=env)
    assert "first prompt" in table.stdout and "$" in table.stdout


def test_continue_a_session(api: MessagesAPIServer, env: dict[str, str], workspace: Path) -> None:
    api.enqueue(reply(text("remembered")), reply(text("still here")))
    first = agentls("run", "--cwd", str(workspace), "--json", "remember 42", env=env)
    session_id = json.loads(first.stdout.splitlines()[-1])["sessionId"]
    second = agentls(
        "run", "--cwd", str(workspace), "--session", session_id, "what number?", env=env
    )
    assert second.returncode == 0, second.stderr
    messages = api.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"][-1]["text"] == "remember 42"


def test_unknown_session_is_a_usage_error(env: dict[str, str], workspace: Path) -> None:
    proc = agentls("run", "--cwd", str(workspace), "--session", "ses_missing", "hi", env=env)
    assert proc.returncode == 2 and "no session" in proc.stderr


def test_kill_9_mid_turn_then_resume(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    marker = workspace / "started"
    (workspace / "notes.txt").write_text("hello\n")
    api.enqueue(
        reply(text("Reading first."), tool_use("read", {"path": "notes.txt"})),
        reply(
            text("Now the long command."), tool_use("bash", {"command": "touch started; sleep 60"})
        ),
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentls.cli.main",
            "run",
            "--cwd",
            str(workspace),
            "--yes",
            "--json",
            "long job",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert time.monotonic() < deadline, "the bash step never started"
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.02)
        proc.kill()
        proc.wait(10)
    finally:
        os.killpg(proc.pid, signal.SIGKILL) if proc.poll() is None else None
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the orphaned `sleep`
        except ProcessLookupError:
            pass
    db = tmp_path / "data" / "agentls.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    async def inspect() -> tuple[str, list[Any]]:
        store = await Store.open(db)
        try:
            sessions = await store.list_sessions()
            messages = await store.load_messages(sessions[0].id)
            return sessions[0].id, messages
        finally:
            await store.close()

    session_id, messages = asyncio.run(inspect())
    assert [m.role for m in messages] == ["user", "assistant", "assistant"]
    tools = [p for m in messages for p in m.tool_parts()]
    assert [(t.tool, t.status) for t in tools] == [("read", "completed"), ("bash", "interrupted")]
    assert messages[1].text() == "Reading first."

    api.enqueue(reply(text("Resumed fine.")))
    resumed = agentls(
        "run", "--cwd", str(workspace), "--session", session_id, "--yes", "go on", env=env
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "Resumed fine." in resumed.stdout
    body = api.requests[-1].body
    results = [
        b
        for m in body["messages"]
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("type") == "tool_result"
    ]
    assert len(results) == 2 and results[1]["is_error"] and "interrupted" in results[1]["content"]
    assert not [r for r in api.all_requests if r.rejected]


def test_demo_fixes_the_failing_test(tmp_path: Path) -> None:
    environment = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))
    environment.pop("AGENTLS_MODEL", None)
    proc = subprocess.run(
        [sys.executable, "-m", "agentls.demo"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAILED (failures=1)" in proc.stdout
    assert "+    return (ordered[middle - 1] + ordered[middle]) / 2" in proc.stdout
    assert "The demo fixed the failing test." in proc.stdout


def test_run_plan_refuses_changes_prints_the_todo_list_and_the_plan(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    todos = [{"content": "look", "status": "completed"}, {"content": "fix", "status": "pending"}]
    api.enqueue(
        reply(tool_use("todowrite", {"todos": todos})),
        reply(tool_use("write", {"path": "new.txt", "content": "x"})),
        reply(tool_use("exit_plan", {"plan": "1. write new.txt"})),
        reply(text("Plan above.")),
    )
    proc = agentls("run", "--cwd", str(workspace), "--plan", "plan a file", env=env)
    assert proc.returncode == 0, proc.stderr
    assert not (workspace / "new.txt").exists()
    assert "Todo (1/2 done):\n  [x] look\n  [ ] fix\n" in proc.stdout
    assert "Plan:\n1. write new.txt\n" in proc.stdout  # the plan itself, where the answer goes
    assert "The plan is above (no terminal to approve it" in proc.stderr
    write, plan = (
        next(b for b in api.requests[n].body["messages"][-1]["content"] if "tool_use_id" in b)
        for n in (2, 3)
    )
    assert write["is_error"] and "plan mode" in write["content"]
    assert plan["is_error"] and "not at a terminal to approve it" in plan["content"]
    # One instruction: end the turn (never "call exit_plan again" with it).
    assert "Do not call exit_plan again" in plan["content"]
    assert "Revise" not in plan["content"] and "Their feedback" not in plan["content"]
    assert "You are in plan mode" in api.requests[0].body["system"][0]["text"]


def test_run_plan_yes_approves_the_plan_and_builds(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(
        reply(tool_use("exit_plan", {"plan": "1. write new.txt"})),
        reply(tool_use("write", {"path": "new.txt", "content": "x\n"})),
        reply(text("Built.")),
    )
    proc = agentls("run", "--cwd", str(workspace), "--plan", "--yes", "do it", env=env)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "new.txt").read_text() == "x\n"
    assert "[mode] plan" in proc.stdout and "[mode] build" in proc.stdout
    assert "Plan:\n1. write new.txt\n" in proc.stdout  # shown, then said to be approved
    assert "Plan approved (--yes)" in proc.stderr


def test_continuing_a_planned_session_without_plan_builds(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(tool_use("exit_plan", {"plan": "1. write new.txt"})), reply(text("Plan.")))
    proc = agentls("run", "--cwd", str(workspace), "--plan", "--json", "plan it", env=env)
    session = json.loads(proc.stdout.splitlines()[-1])["sessionId"]
    api.enqueue(reply(tool_use("write", {"path": "new.txt", "content": "x\n"})), reply(text("ok")))
    proc = agentls("run", "--cwd", str(workspace), "--session", session, "--yes", "build", env=env)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "new.txt").read_text() == "x\n"
    assert "[mode] build" in proc.stdout
