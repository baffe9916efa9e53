"""The questions of a detached background run (`agentls run --background`, session/
background_questions.py) in the editor: agent/listSessions' background entry carries them
(BackgroundInfo.questions), and agent/approve for that session answers them through
background_questions.give_answer, the writer `agentls background answer` uses, bound to the
question's id. A session run in this server (lsp/background_run.py) asks with permission-request
events instead and is answered by its agent."""

from __future__ import annotations

from agentls.lsp.transport import invalid
from agentls.protocol.background import WaitingQuestionInfo
from agentls.protocol.models import ApproveParams
from agentls.session import background as bg
from agentls.session import background_questions as bq


def waiting_info(record: bg.BackgroundRecord) -> list[WaitingQuestionInfo]:
    """The questions record's detached run waits on, as the panel's cards need them."""
    if record.in_process:
        return []
    return [
        WaitingQuestionInfo(
            request_id=q.question_id,
            tool=q.query.tool,
            title=q.query.title,
            input=q.query.input,
            diff=q.query.diff,
            asked_by=q.session_id if q.session_id != record.session_id else None,
        )
        for q in bq.waiting_questions(record)
    ]


def detached_record(session_id: str) -> bg.BackgroundRecord | None:
    """The record of background session session_id when its run is detached (not this server's)."""
    try:
        record = bg.find(session_id)
    except KeyError:
        return None
    if record.session_id != session_id or record.in_process:
        return None
    return record


def answer(record: bg.BackgroundRecord, params: ApproveParams) -> None:
    """agent/approve for a detached run's question: the answer written for the run to read.
    "always" is taken as "once" (the detached run allows that call only); `edit` is refused."""
    if params.edit is not None:
        raise invalid(
            "Invalid params: edit: a detached background session's proposal is accepted or "
            "rejected whole (`agentls background answer` offers the same)"
        )
    question = next(
        (q for q in bq.waiting_questions(record) if q.question_id == params.request_id), None
    )
    if question is None or not bq.still_waiting(record, question.question_id):
        state, _ = bg.state_of(record)
        raise invalid(
            f"Invalid params: requestId: background session {record.session_id} does not wait "
            f"on question {params.request_id!r} (the session is {state})"
        )
    decision = "once" if params.decision == "always" else params.decision
    bq.give_answer(record, question, decision, params.feedback)
