"""A detached background run (`agentls run --background`) that reaches a question waits for
`agentls background answer ID` instead of refusing it: real processes, a real git repository, the
local Messages API; the answer typed at the command's stdin or at a pseudo-terminal."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.session import background as bg
from agentls.session import background_questions as bq
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.terminal_support import Terminal
from tests.cli.test_background import answered_tool, wait_for
from tests.cli.test_cli import agentls

GIT = ("git", "-c", "user.name=Test", "-c", "user.email=test@example.com")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def make_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "--quiet", "-b", "main")
    (root / "app.py").write_text("X = 1\n")
    git(root, "add", "app.py")
    git(root, "commit", "--quiet", "-m", "first")
    return root


def kill_runs_left() -> None:
    """A run still going when a test ends (it failed) is killed."""
    for record in bg.load_all():
        if not record.in_process and bg.state_of(record)[0] in ("running", "waiting"):
            os.killpg(record.pid, signal.SIGKILL)


@pytest.fixture
def repo(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A repository; this process reads the background records the agentls processes write."""
    monkeypatch.setenv("AGENTLS_DATA_DIR", env["AGENTLS_DATA_DIR"])
    yield make_repo(tmp_path)
    kill_runs_left()


def prompted(body: dict[str, Any]) -> bool:
    """The request's last message is a prompt (a resumed turn's has the interrupted call's
    result too)."""
    last = body["messages"][-1]["content"]
    return isinstance(last, str) or any(b.get("type") == "text" for b in last)


def writes_then_says(result: list[str]) -> Callable[[dict[str, Any]], Any]:
    """The model: writes notes.txt (a call that asks), then says what the write's result was
    (kept in `result`)."""

    def answer(body: dict[str, Any]) -> Any:
        if answered_tool(body) and not prompted(body):
            blocks = body["messages"][-1]["content"]
            result.append(json.dumps([b for b in blocks if b.get("type") == "tool_result"]))
            return reply(text("finished"))
        return reply(tool_use("write", {"path": "notes.txt", "content": "from the agent\n"}))

    return answer


def start_waiting(repo: Path, env: dict[str, str], prompt: str) -> bg.BackgroundRecord:
    started = agentls("run", "--background", prompt, env=env, cwd=repo)
    assert started.returncode == 0, started.stderr
    assert "a question waits for `agentls background answer" in started.stderr
    session = dict(line.split(None, 1) for line in started.stdout.splitlines())["session"]
    record = bg.find(session)
    wait_for(lambda: bg.state_of(record)[0] == "waiting", "the run waits on its question")
    return record


def answer(record: bg.BackgroundRecord, env: dict[str, str], keys: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "background", "answer", record.session_id],
        env=env,
        cwd=record.repo_root,
        input=keys,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_waiting_run_is_listed_with_its_question_and_goes_on_once_allowed(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    result: list[str] = []
    api.default = writes_then_says(result)
    record = start_waiting(repo, env, "task notes")
    tree = Path(record.worktree)
    assert not (tree / "notes.txt").exists()

    listed = agentls("background", "list", env=env, cwd=repo)
    assert listed.returncode == 0, listed.stderr
    assert "waiting" in listed.stdout
    assert "waits: Allow" in listed.stdout and "notes.txt" in listed.stdout
    assert f"(agentls background answer {record.session_id})" in listed.stdout
    as_json = json.loads(agentls("background", "list", "--json", env=env, cwd=repo).stdout)
    assert as_json[0]["state"] == "waiting" and "notes.txt" in as_json[0]["questions"][0]

    shown = answer(record, env, "y")
    assert "Background 'task notes' on agentls/task-notes asks:" in shown
    assert "+from the agent" in shown  # the diff, as the approval prompt shows it
    assert "[y]es once" in shown and "[n]o" in shown
    assert "Answered (allowed); the session goes on." in shown

    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")
    assert (tree / "notes.txt").read_text() == "from the agent\n"
    assert not (repo / "notes.txt").exists()
    assert not list(bg.records_dir().glob(f"{record.session_id}.[qa]-*"))
    again = agentls("background", "answer", record.session_id, env=env, cwd=repo)
    assert again.returncode == 1 and "is not waiting for an answer (it is done)" in again.stderr


def test_no_refuses_the_call_and_the_run_goes_on_without_it(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    result: list[str] = []
    api.default = writes_then_says(result)
    record = start_waiting(repo, env, "task refused")
    shown = answer(record, env, "n")
    assert "Answered (refused); the session goes on." in shown
    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")
    assert not (Path(record.worktree) / "notes.txt").exists()
    assert "The user rejected this write call (Create notes.txt). Nothing was done." in result[0]


def put(path: Path, data: dict[str, Any], mode: int) -> None:
    """data written at path with mode at once (the run polling it never sees half of it)."""
    aside = path.with_name(".forged")
    aside.write_text(json.dumps(data))
    aside.chmod(mode)
    os.replace(aside, path)


def test_an_answer_file_for_another_question_or_session_is_ignored(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    api.default = writes_then_says([])
    record = start_waiting(repo, env, "task bound")
    (question,) = bq.waiting_questions(record)
    path = bq.answer_path(record, question.question_id)
    forged = [
        {"questionId": "0" * 32, "sessionId": question.session_id, "decision": "once"},
        {"questionId": question.question_id, "sessionId": "another", "decision": "once"},
        {"questionId": question.question_id, "sessionId": question.session_id, "decision": "yes"},
    ]
    for data in forged:
        put(path, data, 0o600)
        wait_for(lambda: not path.exists(), "the run read and dropped the answer")
        assert bg.state_of(record)[0] == "waiting"
    # Right in every field but writable by others: not taken either.
    right = {"questionId": question.question_id, "sessionId": question.session_id}
    put(path, {**right, "decision": "once"}, 0o666)
    wait_for(lambda: not path.exists(), "the run dropped the answer others could write")
    assert bg.state_of(record)[0] == "waiting"
    assert "ignored an answer file not for question" in Path(record.log + ".err").read_text()

    answer(record, env, "n")
    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")
    assert not (Path(record.worktree) / "notes.txt").exists()


def test_ask_user_in_a_background_run_waits_for_the_answer(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    said: list[str] = []

    def asks(body: dict[str, Any]) -> Any:
        if answered_tool(body):
            said.append(json.dumps(body["messages"][-1]["content"]))
            return reply(text("thanks"))
        assert "ask_user" in {t["name"] for t in body["tools"]}  # offered: someone can answer
        question = {"question": "Which colour?", "choices": ["red", "blue"]}
        return reply(tool_use("ask_user", question))

    api.default = asks
    record = start_waiting(repo, env, "task colour")
    listed = agentls("background", "list", env=env, cwd=repo)
    assert "waits: asks: Which colour?" in listed.stdout
    shown = answer(record, env, "2\n")
    assert "The agent asks: Which colour?" in shown and "  2. blue" in shown
    assert "Answered; the session goes on." in shown
    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")
    assert "blue" in said[0]


def test_a_run_killed_while_it_waits_is_interrupted_and_resumes(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    api.default = writes_then_says([])
    record = start_waiting(repo, env, "task killed")
    os.killpg(record.pid, signal.SIGKILL)
    wait_for(lambda: bg.state_of(record)[0] == "failed", "the run is gone")
    assert "interrupted" in str(bg.state_of(record)[1])
    refused = agentls("background", "answer", record.session_id, env=env, cwd=repo)
    assert refused.returncode == 1 and "is not waiting for an answer (it is failed)" in (
        refused.stderr
    )

    resumed = agentls("background", "resume", record.session_id, env=env, cwd=repo)
    assert resumed.returncode == 0, resumed.stderr
    record = bg.find(record.session_id)
    wait_for(lambda: bg.state_of(record)[0] == "waiting", "the resumed run waits again")
    assert len(bq.waiting_questions(record)) == 1  # the killed run's question is gone
    answer(record, env, "y")
    wait_for(lambda: bg.state_of(record)[0] == "done", "the resumed run done")
    assert (Path(record.worktree) / "notes.txt").read_text() == "from the agent\n"


def test_answer_at_a_terminal_shows_the_labelled_question_and_takes_one_key(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    api.default = writes_then_says([])
    record = start_waiting(repo, env, "task at the terminal")
    with Terminal(["background", "answer", record.session_id], env) as term:
        term.wait_for("[n]o: ")
        term.type(b"\x03")  # Ctrl+C: nothing answered
        assert term.exit_code() == 130
        assert "Not answered: it still waits." in term.text()
    assert bg.state_of(record)[0] == "waiting"
    with Terminal(["background", "answer", record.session_id], env) as term:
        term.wait_for("[n]o: ")
        term.type("y")  # one key, no Enter
        assert term.exit_code() == 0
        shown = term.text()
    print(shown)  # looked at by hand: see the report
    assert "Background 'task at the terminal' on agentls/task-at-the-terminal asks:" in shown
    assert "Answered (allowed); the session goes on." in shown
    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")
    assert (Path(record.worktree) / "notes.txt").exists()


def test_the_chat_says_at_its_prompt_which_background_session_waits(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    api.default = writes_then_says([])
    record = start_waiting(repo, env, "task noticed")
    notice = (
        "Background 'task noticed' on agentls/task-noticed waits for an answer: "
        f"agentls background answer {record.session_id}"
    )
    with Terminal(["--cwd", str(repo)], env) as term:
        term.wait_for("›", after=term.wait_for("waits for an answer"))
        term.type(b"\x04")  # Ctrl+D leaves
        assert term.exit_code() == 0
        shown = " ".join(re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", term.text()).split())
    assert shown.count(notice) == 1  # wrapped at the terminal's 100 columns
    answer(record, env, "n")
    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")


def test_picking_hunks_keeps_only_those_chosen(
    api: MessagesAPIServer, env: dict[str, str], repo: Path
) -> None:
    lines = [f"line {n}\n" for n in range(1, 21)]
    (repo / "long.txt").write_text("".join(lines))
    git(repo, "add", "long.txt")
    git(repo, "commit", "--quiet", "-m", "long")
    changed = ["FIRST\n", *lines[1:19], "LAST\n"]

    def edits_both_ends(body: dict[str, Any]) -> Any:
        steps = sum(m["role"] == "assistant" for m in body["messages"])
        if steps == 0:
            return reply(tool_use("read", {"path": "long.txt"}))
        if steps == 1:
            return reply(tool_use("write", {"path": "long.txt", "content": "".join(changed)}))
        return reply(text("edited"))

    api.default = edits_both_ends
    record = start_waiting(repo, env, "task ends")
    shown = answer(record, env, "pyn")  # pick hunks: keep the first, not the second
    assert "[p]ick hunks (of 2)" in shown and "Kept 1 of 2 hunks." in shown
    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")
    assert (Path(record.worktree) / "long.txt").read_text() == "".join(["FIRST\n", *lines[1:]])


def test_answer_points_to_the_editor_for_a_session_the_editor_runs(
    env: dict[str, str], repo: Path
) -> None:
    session_id = "ses_0123456789abcdef"
    record = bg.BackgroundRecord(
        session_id=session_id,
        repo_root=str(repo),
        worktree=str(repo.parent / "tree"),
        branch="agentls/in-the-editor",
        base=git(repo, "rev-parse", "HEAD").strip(),
        prompt="in the editor",
        pid=os.getpid(),  # the language server running it: here, this process
        log=str(bg.records_dir() / f"{session_id}.log"),
        in_process=True,
    )
    bg.save(record)
    bg.mark_waiting(record, True)
    try:
        refused = agentls("background", "answer", session_id, env=env, cwd=repo)
    finally:
        bg.forget(record)
    assert refused.returncode == 1
    assert "runs in the editor: answer its question in the agent panel there" in refused.stderr
