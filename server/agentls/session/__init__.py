"""The agent core, and the one face every front end (cli/, lsp/) uses: the Agent.

Front ends import from here (and protocol/ for wire models), never store/ or permission/: the
Agent opens and closes its store, lists and loads sessions, prompts, cancels, reverts, asks
(Agent.ask, shown through a QuestionPresenter) and takes answers (Agent.approve).

The modules, one concern each:
- agent.py: the Agent (the face; the sessions it keeps loaded, their queues, cancel);
- state.py: a session in memory (SessionState), a turn's result;
- turn.py: the loop of one turn (steps, write-behind, delta batching, cancel, store faults);
- stream.py: provider events folded into the parts of a message (plain code);
- calls.py: tool calls (run_tools, the doom loop, CallContext, RecordingWorkspace);
- questions.py: permission questions and the one ask path (broker + presenter);
- policy.py: the settings in force, the permission rules they make, the project's grants;
- compaction.py: summarizing the older history near the context window;
- revert.py: undoing the file changes of messages;
- manage.py: rename, delete, fork, search of stored sessions (the Agent inherits it); export.py:
  a session as Markdown;
- modes.py: build and plan mode (what plan mode refuses, exit_plan's question), the todo list;
- context_items.py: a prompt's context items (files, selections, labelled text, images) and the
  policy checks on them (prompt_with_items, the Agent inherits it);
- commands.py: /NAME prompts (built-ins, the user's and a trusted workspace's templates);
- proposals.py: a change the user proposes from the editor (agent/proposeEdit), asked about and
  applied as the agent's edits are; hunk_choice.py: a proposal as hunks a front end asks about
  one by one, and the accepted texts a choice of them makes;
- steering.py: a prompt that joins the running turn at its next step boundary;
- heap.py: the garbage collector's freezing policy;
- retry.py: a turn that ended with an error goes on from its failed step (agent/retry);
- instructions.py: AGENTS.md / CLAUDE.md in the system prompt; system_prompt.py: the base prompt.
"""

from agentls.permission.broker import Answer, ApprovalError
from agentls.session.agent import Agent
from agentls.session.commands import Command, CommandError
from agentls.session.context_items import (
    ContextItem,
    FileItem,
    ImageItem,
    PromptRefused,
    TextItem,
)
from agentls.session.proposals import Proposal, ProposalRefused, propose_edit
from agentls.session.questions import (
    AskContext,
    Asker,
    Question,
    QuestionPresenter,
    answer_taken,
)
from agentls.session.retry import NothingToRetry
from agentls.session.revert import Conflict, NotACheckpoint, NothingToRedo, RevertOutcome
from agentls.session.state import SessionBusyError, TurnResult
from agentls.store import ProjectGrant, SessionRecord, StoreError
from agentls.store.session_locks import SessionLockedError

__all__ = [
    "Agent",
    "Answer",
    "ApprovalError",
    "AskContext",
    "Asker",
    "Command",
    "CommandError",
    "Conflict",
    "ContextItem",
    "FileItem",
    "ImageItem",
    "NotACheckpoint",
    "NothingToRedo",
    "NothingToRetry",
    "PromptRefused",
    "ProjectGrant",
    "Proposal",
    "ProposalRefused",
    "Question",
    "QuestionPresenter",
    "RevertOutcome",
    "SessionBusyError",
    "SessionLockedError",
    "SessionRecord",
    "StoreError",
    "TextItem",
    "TurnResult",
    "answer_taken",
    "propose_edit",
]
