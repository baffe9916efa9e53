"""Questions of a detached background run (`agentls run --background`), answered later from the
terminal with `agentls background answer ID`.

The run has no terminal. When one of its tool calls needs the user's answer (an approval, an
ask_user question, a plan to approve), it writes the question beside its log in the data folder
(`<session>.q-<question id>.json`, the session's title and branch, the tool, the call as the
approval prompt shows it, its diff), marks itself waiting (background.mark_waiting) and reads
`<session>.a-<question id>.json` every POLL_S seconds until an answer for that question comes (or
the broker's approvalTimeout ends the wait). Both files are the user's: created 0600 in the
records folder (0700) of the data folder, which the run's bash sandbox cannot write (it writes
only its worktree and a private /tmp). An answer counts only when it names this question's id and
this session and comes from a regular file of this user that no one else may write; any other is
ignored and removed. A kill -9 while waiting leaves the files; the run is then "failed
(interrupted)" and they count for nothing: `agentls background answer` refuses a session that is
not waiting, and a resume removes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.session import background as bg
from agentls.session.questions import Question, QuestionPresenter
from agentls.tools.base import PermissionQuery
from agentls.workspace.protocol import FileChange

POLL_S = 0.25
DECISIONS = frozenset({"once", "always", "reject"})
SCOPES = frozenset({"session", "project"})

# agent.approve(session_id, request_id, decision, feedback, scope, accepted)
Approve = Callable[..., None]


@dataclass
class WaitingQuestion:
    """A question a background run waits on, as `agentls background answer` reads it back."""

    question_id: str
    session_id: str  # the session asking (a sub-agent's own, under the background session)
    background_id: str  # the background session's id (its record)
    query: PermissionQuery
    always: str | None
    asked_at: int  # ms

    def summary(self) -> str:
        """The question in one line, as `agentls background list` shows it."""
        q = self.query
        if q.tool == "ask_user":
            text = f"asks: {q.input.get('question', '')}"
        elif q.tool == "exit_plan":
            text = "Approve the plan and start building?"
        else:
            text = f"Allow bash `{q.subject}`?" if q.tool == "bash" else f"Allow {q.title}?"
        return " ".join(text.split())[:160]


def _question_path(record: bg.BackgroundRecord, question_id: str) -> Path:
    return bg.records_dir() / f"{record.session_id}.q-{question_id}.json"


def answer_path(record: bg.BackgroundRecord, question_id: str) -> Path:
    return bg.records_dir() / f"{record.session_id}.a-{question_id}.json"


def _write_private(path: Path, data: dict[str, Any]) -> None:
    """data as JSON at path, readable and writable by this user only (written aside, then moved
    into place, so a reader never sees half of it)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out)
    os.replace(tmp, path)


def _read_private(path: Path) -> dict[str, Any] | None:
    """The JSON object at path when it is a regular file of this user that no one else may write
    (not a link); None otherwise or when unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        if info.st_mode & 0o022:
            return None
        try:
            data = json.loads(handle.read(4_000_000))
        except ValueError:
            return None
    return data if isinstance(data, dict) else None


def _query_wire(query: PermissionQuery) -> dict[str, Any]:
    return {
        "tool": query.tool,
        "subject": query.subject,
        "title": query.title,
        "input": query.input,
        "diff": query.diff,
        "path": str(query.path) if query.path is not None else None,
        "oldText": query.old_text,
        "newText": query.new_text,
        "sandboxed": query.sandboxed,
        "outsideWorkspace": query.outside_workspace,
        "changes": None
        if query.changes is None
        else [
            {"path": str(c.path), "oldText": c.old_text, "newText": c.new_text}
            for c in query.changes
        ],
    }


def _query_of(data: dict[str, Any]) -> PermissionQuery:
    changes = data.get("changes")
    path = data.get("path")
    return PermissionQuery(
        tool=str(data["tool"]),
        subject=str(data.get("subject", "")),
        title=str(data.get("title", "")),
        input=dict(data.get("input") or {}),
        diff=data.get("diff"),
        path=Path(path) if path else None,
        outside_workspace=bool(data.get("outsideWorkspace")),
        old_text=data.get("oldText"),
        new_text=data.get("newText"),
        sandboxed=bool(data.get("sandboxed")),
        changes=None
        if changes is None
        else [FileChange(Path(c["path"]), c["newText"], c.get("oldText")) for c in changes],
    )


def waiting_questions(record: bg.BackgroundRecord) -> list[WaitingQuestion]:
    """The questions record's run waits on, oldest first (none unless it is waiting)."""
    if bg.state_of(record)[0] != "waiting":
        return []
    found = []
    for path in bg.records_dir().glob(f"{record.session_id}.q-*.json"):
        data = _read_private(path)
        try:
            if data is None or data["backgroundId"] != record.session_id:
                continue
            found.append(
                WaitingQuestion(
                    question_id=str(data["questionId"]),
                    session_id=str(data["sessionId"]),
                    background_id=record.session_id,
                    query=_query_of(data["query"]),
                    always=data.get("always"),
                    asked_at=int(data.get("askedAt", 0)),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    return sorted(found, key=lambda q: q.asked_at)


def still_waiting(record: bg.BackgroundRecord, question_id: str) -> bool:
    return _question_path(record, question_id).exists()


def give_answer(
    record: bg.BackgroundRecord,
    question: WaitingQuestion,
    decision: str,
    feedback: str | None = None,
    scope: str = "session",
    accepted: dict[Path, str] | None = None,
) -> None:
    """The user's answer to question, for the run to read (bound to the question's id)."""
    _write_private(
        answer_path(record, question.question_id),
        {
            "questionId": question.question_id,
            "sessionId": question.session_id,
            "decision": decision,
            "feedback": feedback,
            "scope": scope,
            "accepted": None
            if accepted is None
            else {str(path): text for path, text in accepted.items()},
        },
    )


def _proposed_paths(query: PermissionQuery) -> set[str]:
    paths = {str(c.path) for c in query.changes or []}
    return paths | ({str(query.path)} if query.path is not None else set())


def _take_answer(path: Path, question_id: str, question: Question) -> dict[str, Any] | None:
    """The answer at path when it is for this question; anything else there is removed."""
    if not path.exists():
        return None
    data = _read_private(path)
    with contextlib.suppress(OSError):
        path.unlink()
    if (
        data is None
        or data.get("questionId") != question_id
        or data.get("sessionId") != question.session_id
        or data.get("decision") not in DECISIONS
        or data.get("scope", "session") not in SCOPES
    ):
        print(f"agentls: ignored an answer file not for question {question_id}", file=sys.stderr)
        return None
    return data


async def _wait_for_answer(
    record: bg.BackgroundRecord, question_id: str, question: Question, approve: Approve
) -> None:
    path = answer_path(record, question_id)
    while True:
        data = await asyncio.to_thread(_take_answer, path, question_id, question)
        if data is not None:
            break
        await asyncio.sleep(POLL_S)
    accepted = data.get("accepted")
    texts = None
    if isinstance(accepted, dict):
        proposed = _proposed_paths(question.query)
        texts = {Path(p): str(t) for p, t in accepted.items() if p in proposed}
    feedback = data.get("feedback")
    approve(
        question.session_id,
        question.request_id,
        data["decision"],
        str(feedback) if feedback else None,
        data.get("scope", "session"),
        texts,
    )


def waiting_presenter(
    record: bg.BackgroundRecord,
    approve: Approve,
    passes: Callable[[Question], bool] = lambda _q: False,
    other: QuestionPresenter | None = None,
) -> QuestionPresenter:
    """The detached run's presenter: each question written down and waited on (see the module's
    docstring); a question `passes` says is not for the user (--yes allows it) goes to other."""
    open_questions: set[str] = set()

    @contextlib.contextmanager
    def present(question: Question) -> Iterator[None]:
        if other is not None and passes(question):
            with other(question):
                yield
            return
        question_id = uuid.uuid4().hex
        _write_private(
            _question_path(record, question_id),
            {
                "questionId": question_id,
                "sessionId": question.session_id,
                "backgroundId": record.session_id,
                "query": _query_wire(question.query),
                "always": question.always,
                "askedAt": int(time.time() * 1000),
            },
        )
        open_questions.add(question_id)
        bg.mark_waiting(record, True)
        waiting = asyncio.ensure_future(_wait_for_answer(record, question_id, question, approve))
        try:
            yield
        finally:
            waiting.cancel()
            open_questions.discard(question_id)
            for path in (_question_path(record, question_id), answer_path(record, question_id)):
                with contextlib.suppress(OSError):
                    path.unlink()
            bg.mark_waiting(record, bool(open_questions))

    return present
