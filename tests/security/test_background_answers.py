"""A background session cannot answer its own question: the answer `agentls background answer`
writes lives in the user's data folder, which the session's sandboxed bash (confined to its
worktree) cannot write. The data folder here is outside /tmp and $HOME, where the sandbox would
hide it for that reason alone: only the read-only filesystem stops the writes."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.session import background as bg
from agentls.session import background_questions as bq
from messages_api import MessagesAPIServer
from tests.cli.test_background import wait_for
from tests.cli.test_background_answer import (
    answer,
    kill_runs_left,
    make_repo,
    start_waiting,
    writes_then_says,
)
from tests.cli.test_cli import agentls
from tests.security.conftest import SecurityFigures
from tests.security.sandbox_support import context, outside_dir, require_bwrap, run

SELF_APPROVAL = "background session answering its own question"

FORGERIES = [
    "printf '%s' '{answer}' > {path}",
    "python3 -c \"open('{path}', 'w').write('{answer}')\"",
    "cp /dev/stdin {path} <<'EOF'\n{answer}\nEOF",
    "ln -s $PWD/answer.json {path}; echo '{answer}' > answer.json",
    "mv answer.json {path} 2>/dev/null; echo '{answer}' > answer.json; mv answer.json {path}",
    "unshare -rm sh -c 'mount -o remount,rw {dir}; echo x > {path}'; echo '{answer}' > {path}",
]


@pytest.fixture
def repo(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A repository whose background sessions keep their records in a data folder outside /tmp
    (read by this process too)."""
    folder = outside_dir("background-answers")
    env["AGENTLS_DATA_DIR"] = str(folder)
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(folder))
    yield make_repo(tmp_path)
    kill_runs_left()
    shutil.rmtree(folder, ignore_errors=True)


async def test_sandboxed_bash_in_the_worktree_cannot_write_the_answer(
    api: MessagesAPIServer,
    env: dict[str, str],
    repo: Path,
    security_figures: SecurityFigures,
) -> None:
    require_bwrap()
    result: list[str] = []
    api.default = writes_then_says(result)
    record = start_waiting(repo, env, "task forge")
    (question,) = bq.waiting_questions(record)
    path = bq.answer_path(record, question.question_id)
    approving = json.dumps(
        {"questionId": question.question_id, "sessionId": question.session_id, "decision": "once"}
    )
    tree = Path(record.worktree)
    for forgery in FORGERIES:
        with security_figures.attempt(SELF_APPROVAL):
            command = forgery.format(answer=approving, path=path, dir=path.parent)
            done = await run(context(tree), command)
            assert done.metadata["sandboxed"] is True
            assert not path.exists() and not path.is_symlink(), done.output
            assert bg.state_of(record)[0] == "waiting"
    # The question's file cannot be changed or removed either (the run would stop waiting).
    with security_figures.attempt(SELF_APPROVAL):
        done = await run(context(tree), f"rm -f {path.parent}/*.json {record.log}.waiting")
        assert len(bq.waiting_questions(record)) == 1, done.output

    answer(record, env, "n")  # the user's own answer still decides
    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")
    assert not (tree / "notes.txt").exists()
    assert "The user rejected this write call" in result[0]
    listed = agentls("background", "list", env=env, cwd=repo)
    assert "done" in listed.stdout


def test_question_and_answer_files_are_the_users_only(
    api: MessagesAPIServer,
    env: dict[str, str],
    repo: Path,
) -> None:
    api.default = writes_then_says([])
    record = start_waiting(repo, env, "task private")
    (question,) = bq.waiting_questions(record)
    questions = list(bg.records_dir().glob(f"{record.session_id}.q-*.json"))
    assert [oct(p.stat().st_mode & 0o777) for p in questions] == ["0o600"]
    os.killpg(record.pid, signal.SIGSTOP)  # the run does not take the answer meanwhile
    try:
        bq.give_answer(record, question, "reject")
        given = bq.answer_path(record, question.question_id)
        assert given.stat().st_mode & 0o777 == 0o600
    finally:
        os.killpg(record.pid, signal.SIGCONT)
    wait_for(lambda: bg.state_of(record)[0] == "done", "the run done")
    assert not (Path(record.worktree) / "notes.txt").exists()
