"""Everything a turn produces, as plain data: front ends render these, the LSP layer relays them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from agentls.history import FinishReason, Usage
from agentls.model.base import ErrorKind
from agentls.wire import WireModel


class EventBase(WireModel):
    session_id: str
    # Set on every event of a sub-agent (the task tool's child session, which session_id then
    # names): the session and the task call it runs for, and its agent type. Front ends nest
    # these events under that call.
    parent_session_id: str | None = None
    parent_call_id: str | None = None
    agent: str | None = None


class TurnStart(EventBase):
    type: Literal["turn-start"] = "turn-start"
    message_id: str  # the user message that started the turn
    prompt: str
    # agent/retry: the failed turn of that user message goes on (no new user message).
    retry: bool | None = None


class TextDeltaEvent(EventBase):
    type: Literal["text-delta"] = "text-delta"
    delta: str
    message_id: str | None = None


class ThinkingDeltaEvent(EventBase):
    type: Literal["thinking-delta"] = "thinking-delta"
    delta: str
    message_id: str | None = None


class ToolCallEvent(EventBase):
    type: Literal["tool-call"] = "tool-call"
    call_id: str
    tool: str
    input: dict[str, Any]
    title: str


class ToolResultEvent(EventBase):
    type: Literal["tool-result"] = "tool-result"
    call_id: str
    tool: str
    output: str
    is_error: bool
    status: str | None = None
    # The call's title after it ran, when the tool refined it (e.g. "read calc.py" -> "Read calc.py").
    title: str | None = None


class ProposedFileChange(WireModel):
    """One file's part of a change to several files (a rename): its text before and after."""

    path: str  # absolute
    old_text: str | None = None  # None: a new file
    new_text: str


class PermissionRequestEvent(EventBase):
    type: Literal["permission-request"] = "permission-request"
    request_id: str
    call_id: str
    tool: str
    title: str
    input: dict[str, Any]
    diff: str | None = None
    edit: dict[str, Any] | None = None
    # What answering "always" would allow, in the words shown to the user (e.g. "Always allow
    # `git status` commands"); None: "always" is not offered for this call.
    always: str | None = None
    # bash: the command will run inside the sandbox (workspace writable, the rest read-only,
    # secrets hidden, network off unless sandboxNetwork).
    sandboxed: bool = False
    # A change to several files (rename): every file's text before and after, so a front end
    # can show each one; `diff` is their combined unified diff. None for one-file changes.
    changes: list[ProposedFileChange] | None = None


class PermissionResolvedEvent(EventBase):
    type: Literal["permission-resolved"] = "permission-resolved"
    request_id: str
    # "unattended": no one could be asked (`agentls run` without a terminal).
    decision: Literal["once", "always", "reject", "timeout", "cancelled", "unattended"]


class ProposalRebasedEvent(EventBase):
    """A proposal waiting for approval, redrawn after the user changed its file (lsp: a
    didChange while it waits): the change three-way merged into the document as it is now
    (workspace/merge.py). `edit`: the proposal's WorkspaceEdit on the document now (one TextEdit
    per hunk, at its version), `diff` from the text now, replacing the permission-request's.
    `conflict`: the user changed lines the proposal changes too (`lines`, e.g. "line 4"): no
    edit, accepting is refused (nothing is written over the user's lines), rejecting tells the
    model why. A later change that clears the overlap sends a clean one again."""

    type: Literal["proposal-rebased"] = "proposal-rebased"
    request_id: str
    path: str
    edit: dict[str, Any] | None = None
    diff: str | None = None
    conflict: bool = False
    lines: str | None = None


class RetryEvent(EventBase):
    type: Literal["retry"] = "retry"
    attempt: int
    delay_ms: int
    reason: str


class UsageEvent(EventBase):
    """A step's usage, and the turn's and the session's so far (the session's totals count its
    sub-agents' and any step stopped before it finished; `estimated` marks a total that holds an
    estimate); `subagents`: the sub-agents' share of the session's, when one ran."""

    type: Literal["usage"] = "usage"
    step: Usage
    turn: Usage
    session: Usage
    subagents: Usage | None = None


class TurnEnd(EventBase):
    type: Literal["turn-end"] = "turn-end"
    finish_reason: FinishReason
    message_id: str | None = None


class ErrorEvent(EventBase):
    """Something failed. A failed turn's error (the turn ends with it) also has its kind, the next
    step, whether agent/retry makes sense, and the details (the exception); `message` is then a
    sentence for a person. Without a kind: a problem the turn goes on after (an MCP server that
    did not start), or a store fault, said in `message`."""

    type: Literal["error"] = "error"
    message: str
    kind: ErrorKind | None = None
    next_step: str | None = None
    retryable: bool | None = None
    details: str | None = None


class CompactionEvent(EventBase):
    """The session's older history is being (or was) replaced by a summary."""

    type: Literal["compaction"] = "compaction"
    status: Literal["started", "done", "failed"]
    # The context size that triggered it, and the window it is measured against.
    context_tokens: int
    context_window: int
    summary_message_id: str | None = None  # done: the new summary message
    summarized_messages: int | None = None  # done: how many messages it replaced
    error: str | None = None  # failed: why (the session is left as it was)


class ProgressEvent(EventBase):
    type: Literal["progress"] = "progress"
    call_id: str
    message: str


TodoStatus = Literal["pending", "in_progress", "completed"]
SessionMode = Literal["build", "plan"]


class TodoItem(WireModel):
    """One entry of a session's todo list (the todowrite tool keeps it)."""

    content: str = Field(min_length=1)
    status: TodoStatus
    priority: Literal["high", "medium", "low"] | None = None


class TodoEvent(EventBase):
    """The session's todo list changed: the whole list, as it is now."""

    type: Literal["todo"] = "todo"
    todos: list[TodoItem]


class ModeEvent(EventBase):
    """The session's mode changed (agent/setMode, or the user approved a plan: build)."""

    type: Literal["mode"] = "mode"
    mode: SessionMode


class SteerEvent(EventBase):
    """A prompt sent with mode "steer" joined the running turn at a step boundary: the user
    message it became (after the step's tool results)."""

    type: Literal["steer"] = "steer"
    message_id: str
    prompt: str


class ReviewHunk(WireModel):
    """One change in a file under review: lines [oldStart, oldStart+oldLines) of the reviewed base
    became newLines lines from newStart (0-based); `diff` is the hunk in unified form."""

    index: int
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    diff: str


class ReviewFile(WireModel):
    """A file the agent changed under review "after", not yet kept or undone."""

    path: str
    # The text as the user last kept it (None: the agent created the file), and the agent's.
    base: str | None
    agent: str | None  # None: the agent deleted it
    hunks: list[ReviewHunk]


class ReviewEvent(EventBase):
    """Review "after": what the session's pending review holds now (every file not yet kept or
    undone), sent when an edit adds to it and when an answer takes from it."""

    type: Literal["review"] = "review"
    files: list[ReviewFile]


class GateProblem(WireModel):
    """A problem the finish gate found that the turn introduced."""

    path: str  # relative to the workspace root
    line: int  # 1-based
    severity: Literal["error", "warning"]
    message: str
    source: str | None = None


class FinishGateEvent(EventBase):
    """The finish gate's result (session/finish_gate.py) when the model's answer would end the
    turn: the files checked again (those the turn changed, and those using what it changed) and
    the problems the turn introduced in them. "clean": none; "sent-back": told to the model as one
    more step (the `attempt`-th of at most `max_attempts`); "left": the turn ends with them.
    `unchecked`: files whose diagnostics did not come in time."""

    type: Literal["finish-gate"] = "finish-gate"
    status: Literal["clean", "sent-back", "left"]
    level: Literal["errors", "warnings"]
    checked: int
    unchecked: int = 0
    attempt: int
    max_attempts: int
    problems: list[GateProblem] = Field(default_factory=list)


class HookEvent(EventBase):
    """A hook (the user's command, Claude Code's settings format: agentls/hooks) ran: at which
    event, which command from which file, how long it took and how it ended. "blocked": it
    refused (exit 2 or a block/deny answer); "error": it failed without blocking (another exit
    code, it could not start); "timeout": it was killed after its timeout. `message`: what it
    said (its stderr or reason when it blocked or failed)."""

    type: Literal["hook"] = "hook"
    event: str
    command: str
    source: str
    duration_ms: int
    outcome: Literal["ok", "blocked", "error", "timeout"]
    exit_code: int | None = None
    message: str | None = None
    tool: str | None = None  # a tool event's tool, as Claude Code names it


AgentEvent = Annotated[
    TurnStart
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | ToolCallEvent
    | ToolResultEvent
    | PermissionRequestEvent
    | PermissionResolvedEvent
    | ProposalRebasedEvent
    | RetryEvent
    | UsageEvent
    | TurnEnd
    | ErrorEvent
    | CompactionEvent
    | ProgressEvent
    | TodoEvent
    | ModeEvent
    | SteerEvent
    | ReviewEvent
    | FinishGateEvent
    | HookEvent,
    Field(discriminator="type"),
]
