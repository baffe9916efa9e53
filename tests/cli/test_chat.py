"""`agentls` (the conversation) at a pseudo-terminal, as a person sees it: rendered answers, several
turns in one session, Ctrl+C mid-stream and on, leaving and coming back with -c / --resume."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from messages_api import MessagesAPIServer, reply, text
from tests.cli.terminal_support import Terminal

ANSWER = (
    "Here is **the point**.\n\n"
    "| name | value |\n|------|-------|\n| x | 1 |\n\n"
    "```python\ndef double(x):\n    return 2 * x\n```\n"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.md").write_text("the notes\n")
    return root


def plain(shown: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)


def sessions(env: dict[str, str], workspace: Path) -> list[dict[str, object]]:
    listed = subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "sessions", "--json", "--cwd", str(workspace)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[dict[str, object]] = json.loads(listed.stdout)
    return found


def test_a_conversation_renders_markdown_and_keeps_one_session_across_turns(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text(ANSWER)), reply(text("Second answer.")))
    with Terminal(["--cwd", str(workspace)], env) as term:
        term.wait_for("›")
        term.type("explain it\r")
        at = term.wait_for("return")
        shown = term.text()
        assert "\x1b[1mthe point" in shown  # bold, not asterisks
        assert "**the point**" not in plain(shown)
        assert "|------|" not in plain(shown)  # a table, not pipes
        assert re.search(r"\x1b\[[0-9;]*38;5;\d+[0-9;]*mdef", shown)  # highlighted code
        assert "```" not in plain(shown[shown.find("Here is") :])
        term.wait_for("›", after=at)
        term.type("and then?\r")
        term.wait_for("›", after=term.wait_for("Second answer.", after=at))
        term.type(b"\x04")  # Ctrl+D leaves
        assert term.exit_code() == 0
        resume = re.search(r"agentls --resume (ses_\w+)", term.text())
    assert resume is not None
    second = api.requests[-1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]  # one conversation
    assert [s["id"] for s in sessions(env, workspace)] == [resume.group(1)]


def test_ctrl_c_stops_a_streaming_answer_and_the_conversation_goes_on(
    env: dict[str, str], workspace: Path
) -> None:
    with Terminal(["--cwd", str(workspace), "--model", "scripted:slow"], env) as term:
        term.wait_for("›")
        term.type("talk at length\r")
        term.wait_for("streams slowly")
        term.type(b"\x03")  # Ctrl+C
        stopped = term.wait_for("(stopped")
        term.wait_for("›", after=stopped)
        assert term.proc.poll() is None  # still in the conversation
        term.type("/status\r")
        term.wait_for("›", after=term.wait_for("scripted:slow · build", after=stopped))
        term.type(b"\x04")
        assert term.exit_code() == 0
    listed = sessions(env, workspace)
    assert len(listed) == 1


def test_continue_goes_on_with_the_workspaces_last_session(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text("First answer.")), reply(text("Later answer.")))
    with Terminal(["--cwd", str(workspace)], env) as term:
        term.wait_for("›")
        term.type("remember 42\r")
        term.wait_for("›", after=term.wait_for("First answer."))
        term.type(b"\x04")
        assert term.exit_code() == 0
    first = sessions(env, workspace)[0]["id"]
    with Terminal(["-c", "--cwd", str(workspace)], env) as term:
        term.wait_for("Resumed")
        term.wait_for("First answer.")  # the last exchange is shown again
        term.type("what was it?\r")
        term.wait_for("›", after=term.wait_for("Later answer."))
        term.type(b"\x04")
        assert term.exit_code() == 0
        assert f"agentls --resume {first}" in term.text()
    assert [m["role"] for m in api.requests[-1].body["messages"]] == ["user", "assistant", "user"]
    assert len(sessions(env, workspace)) == 1


def test_resume_lists_the_sessions_and_goes_on_with_the_one_picked(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text("One.")), reply(text("Two.")), reply(text("Back in one.")))
    for prompt in ("first task", "second task"):
        run = subprocess.run(
            [sys.executable, "-m", "agentls.cli.main", "run", "--cwd", str(workspace), prompt],
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=True,
        )
        assert "agentls --resume ses_" in run.stderr  # each run says how to go on
    older = sessions(env, workspace)[1]
    with Terminal(["--resume", "--cwd", str(workspace)], env) as term:
        term.wait_for("Go on with which one?")
        assert "first task" in term.text() and "second task" in term.text()
        term.type("2\r")
        term.wait_for("Resumed")
        term.type("and now?\r")
        term.wait_for("›", after=term.wait_for("Back in one."))
        term.type(b"\x04")
        assert term.exit_code() == 0
    assert f"--resume {older['id']}" in term.text()
    first_prompt = api.requests[-1].body["messages"][0]["content"]
    assert "first task" in json.dumps(first_prompt)


def test_a_mentioned_file_is_attached_and_commands_complete(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text("Read them.")))
    with Terminal(["--cwd", str(workspace)], env) as term:
        term.wait_for("›")
        term.type("look at @note")
        menu = term.wait_for("notes.md")  # offered as it is typed
        term.type("\t")  # Tab takes it
        term.wait_for("s.md", after=menu + 8)  # the line's redraw writes only what Tab added
        term.type("\r")
        term.wait_for("›", after=term.wait_for("Read them."))
        term.type(b"\x04")
        assert term.exit_code() == 0
    assert "the notes" in json.dumps(api.requests[-1].body["messages"][0]["content"])


def test_no_color_and_a_pipe_get_plain_text(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text(ANSWER)), reply(text(ANSWER)))
    with Terminal(["run", "--cwd", str(workspace), "explain"], {**env, "NO_COLOR": "1"}) as term:
        assert term.exit_code() == 0
        shown = term.text()
    assert "**the point**" in shown and "\x1b[1m" not in shown
    piped = subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "run", "--cwd", str(workspace), "explain"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=True,
    )
    assert "**the point**" in piped.stdout and "\x1b[" not in piped.stdout


def test_run_at_a_terminal_is_rendered_and_continue_takes_the_last_session(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(reply(text(ANSWER)), reply(text("Again.")))
    with Terminal(["run", "--cwd", str(workspace), "explain"], env) as term:
        assert term.exit_code() == 0
        assert "\x1b[1mthe point" in term.text()
    continued = subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "run", "-c", "--cwd", str(workspace), "more"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=True,
    )
    assert "Again." in continued.stdout
    assert [m["role"] for m in api.requests[-1].body["messages"]] == ["user", "assistant", "user"]


def test_the_conversation_needs_a_terminal(env: dict[str, str], workspace: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "--cwd", str(workspace)],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 2
    assert "agentls run" in proc.stderr
