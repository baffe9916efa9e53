"""The agent core, and the one face every front end (cli/, lsp/) uses: the Agent.

Front ends import from here (and protocol/ for wire models), never store/ or permission/: the
Agent opens and closes its store, lists and loads sessions, prompts, cancels, reverts, asks
(Agent.ask, shown through a QuestionPresenter) and takes answers (Agent.approve).
"""

from agentls.permission.broker import Answer, ApprovalError
from agentls.session.agent import (
    Agent,
    AskContext,
    Asker,
    Question,
    QuestionPresenter,
    RevertOutcome,
    SessionBusyError,
    TurnResult,
    answer_taken,
)
from agentls.store import ProjectGrant, SessionRecord, StoreError
from agentls.store.session_locks import SessionLockedError

__all__ = [
    "Agent",
    "Answer",
    "ApprovalError",
    "AskContext",
    "Asker",
    "ProjectGrant",
    "Question",
    "QuestionPresenter",
    "RevertOutcome",
    "SessionBusyError",
    "SessionLockedError",
    "SessionRecord",
    "StoreError",
    "TurnResult",
    "answer_taken",
]
