"""A detached background run's questions (agentls.session.background_questions): written down
for `agentls background answer`, the session waiting meanwhile, an answer taken only for its
question and passed on as given, nothing left behind once the question ends."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentls.session import background as bg
from agentls.session import background_questions as bq
from agentls.session.questions import Question
from agentls.tools.base import PermissionQuery


@pytest.fixture(autouse=True)
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))


def a_record(tmp_path: Path) -> bg.BackgroundRecord:
    """A record whose run is this process (so it reads running, or waiting while marked)."""
    session_id = "ses_0123456789abcdef"
    record = bg.BackgroundRecord(
        session_id=session_id,
        repo_root=str(tmp_path / "repo"),
        worktree=str(tmp_path / "tree"),
        branch="agentls/task",
        base="0" * 40,
        prompt="task",
        pid=os.getpid(),
        log=str(bg.records_dir() / f"{session_id}.log"),
        in_process=True,
    )
    bg.save(record)
    return record


async def test_a_question_waits_until_its_answer_comes_and_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    record = a_record(tmp_path)
    target = tmp_path / "tree" / "a.txt"
    query = PermissionQuery(
        tool="write",
        subject="a.txt",
        title="Create a.txt",
        input={"path": "a.txt", "content": "hi\n"},
        diff="--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hi\n",
        path=target,
        new_text="hi\n",
    )
    question = Question(record.session_id, "req_1", "call_1", query, always="writes of a.txt")
    approved: list[tuple[object, ...]] = []
    present = bq.waiting_presenter(record, lambda *given: approved.append(given))

    assert bg.state_of(record)[0] == "running"
    with present(question):
        assert bg.state_of(record)[0] == "waiting"
        (waiting,) = bq.waiting_questions(record)
        assert waiting.summary() == "Allow Create a.txt?"
        assert (waiting.query.path, waiting.query.new_text) == (target, "hi\n")
        assert waiting.always == "writes of a.txt"
        (written,) = bg.records_dir().glob(f"{record.session_id}.q-*.json")
        assert written.stat().st_mode & 0o777 == 0o600

        # The user keeps their own version; a path the question did not propose is dropped.
        mine = {target: "mine\n", Path("/etc/profile"): "not proposed\n"}
        bq.give_answer(record, waiting, "once", "my version", accepted=mine)
        async with asyncio.timeout(30):
            while not approved:
                await asyncio.sleep(0.05)
    assert approved == [
        (record.session_id, "req_1", "once", "my version", "session", {target: "mine\n"})
    ]
    assert bg.state_of(record)[0] == "running"
    assert not list(bg.records_dir().glob(f"{record.session_id}.[qa]-*"))
    assert bq.waiting_questions(record) == []


async def test_a_call_yes_allows_goes_to_the_other_presenter_and_ask_user_still_waits(
    tmp_path: Path,
) -> None:
    record = a_record(tmp_path)
    shown: list[str] = []

    @contextmanager
    def other(question: Question) -> Iterator[None]:
        shown.append(question.query.tool)
        yield

    present = bq.waiting_presenter(
        record, lambda *given: None, passes=lambda q: q.query.tool != "ask_user", other=other
    )
    bash = PermissionQuery(tool="bash", subject="make", title="Run make", input={})
    with present(Question(record.session_id, "req_1", "call_1", bash)):
        assert bg.state_of(record)[0] == "running"  # not written down: --yes answers it
    said = {"question": "Which?", "choices": []}
    asked = PermissionQuery(tool="ask_user", subject="Which?", title="Which?", input=said)
    with present(Question(record.session_id, "req_2", "call_2", asked)):
        assert [q.summary() for q in bq.waiting_questions(record)] == ["asks: Which?"]
    assert shown == ["bash"]
