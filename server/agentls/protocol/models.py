"""Wire models of the agent protocol (camelCase on the wire). Source of schemas/ and docs."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from agentls.events import SessionMode, TodoItem
from agentls.history import FinishReason, Part, Range, Usage
from agentls.protocol.background import BackgroundInfo
from agentls.protocol.background_review import (
    BackgroundApplyParams,
    BackgroundApplyResult,
    BackgroundDiffParams,
    BackgroundDiffResult,
    BackgroundRemoveParams,
    BackgroundRemoveResult,
)
from agentls.protocol.base import Params as Params
from agentls.protocol.base import Result as Result
from agentls.protocol.config_trust import (
    ConfirmWorkspaceConfigParams,
    ConfirmWorkspaceConfigResult,
)
from agentls.protocol.propose import ProposeEditParams, ProposeEditResult
from agentls.protocol.review import (
    ListReviewParams,
    ListReviewResult,
    RevertConflict,
    RevertScope,
    ReviewParams,
    ReviewResult,
    UnrevertParams,
    UnrevertResult,
)
from agentls.protocol.skills import ListSkillsParams, ListSkillsResult
from agentls.wire import WireModel

PROTOCOL_VERSION = 1


class ContextRef(Params):
    uri: str
    range: Range | None = None


class TextRef(Params):
    """Text the editor gathered for the prompt (@problems, @terminal, @git), under a label; stored
    with the message as a context part whose uri is the label. Past 100,000 characters it is cut."""

    type: Literal["text"]
    label: str = Field(min_length=1, max_length=200)
    text: str


class ImageRef(Params):
    """An image for the model: pasted (mimeType and data, base64) or a workspace file (uri; read
    through the read rules: a file outside the workspace or a secret is refused). PNG, JPEG, GIF
    or WebP; one past the API's limits (5 MB, 8000 px a side) is downscaled. Anything else is an
    Invalid params error naming context."""

    type: Literal["image"]
    mime_type: str | None = None
    data: str | None = Field(default=None, min_length=1)
    uri: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ImageRef:
        if (self.data is None) == (self.uri is None):
            raise ValueError("an image has either data (with mimeType) or a uri")
        if self.data is not None and self.mime_type is None:
            raise ValueError("an image's data needs its mimeType")
        return self


class NewSessionParams(Params):
    title: str | None = None


class NewSessionResult(Result):
    session_id: str


class PromptParams(Params):
    """`agent/prompt`. A text "/NAME args" runs a command (agent/listCommands): a custom one is
    expanded into the prompt sent (its turn run as the agent type its front matter names, if
    any); a built-in (compact, clear, model) answers without a turn: messageId null, its outcome
    in text, and /clear's new session in sessionId. An unknown one (or agent type), or an @path
    the read rules refuse, is an Invalid params error naming text; nothing is sent.
    The text may be empty (or blank) when the context holds an image: the prompt is its images."""

    session_id: str
    context: list[ContextRef | TextRef | ImageRef] | None = None
    text: str

    @field_validator("text")
    @classmethod
    def _text_or_image(cls, text: str, info: ValidationInfo) -> str:
        context = info.data.get("context", ())  # absent: context is itself invalid
        if not text.strip() and not any(isinstance(c, ImageRef) for c in context or ()):
            raise ValueError("a prompt needs text, or an image in its context")
        return text

    # "queue" (default): a prompt to a busy session waits for the running turn to end. "steer":
    # it joins the running turn at its next step boundary (after that step's tool results) and
    # the result is that turn's; to an idle session it is an ordinary prompt.
    mode: Literal["queue", "steer"] = "queue"
    # true: the text starts a new session in a new git worktree of the workspace's repository on
    # its own branch (agentls/<slug>), run detached; sessionId names the session it is sent from
    # and is not prompted. The answer comes at once: the new session's id, messageId null, its
    # start in text and `background`. Refused (Invalid params) outside a git repository or with
    # backgroundLimit sessions running already. It cannot ask: calls that would ask are refused.
    background: bool = False


TurnFinishReason = Literal["end_turn", "max_tokens", "cancelled", "max_steps", "doom_loop", "error"]


class PromptResult(Result):
    """The turn's outcome: its last assistant message, final text and summed usage."""

    session_id: str
    message_id: str | None
    finish_reason: TurnFinishReason
    text: str
    usage: Usage
    # With background: true, the session started (see PromptParams.background).
    background: BackgroundInfo | None = None


class SetModeParams(Params):
    """`agent/setMode`: the session's mode, kept with it. "plan": every tool that could change
    something (edit, write, rename, bash lines that are not read-only, ...) is refused, and the
    model is told it is planning; it leaves plan mode by calling exit_plan, which the user
    approves (a permission-request with tool "exit_plan" and input {plan}). "build": the
    default."""

    session_id: str
    mode: SessionMode


class SetModeResult(Result):
    mode: SessionMode


class CancelParams(Params):
    session_id: str


class CancelResult(Result):
    cancelled: bool


class RetryParams(Params):
    """`agent/retry`: the session's last turn ended with an error (an error event with a kind);
    run it again from where it failed: its completed steps and tool results are kept, the failed
    model call is made again (no new user message; the turn-start event has retry true). The
    result is the turn's, as agent/prompt's. An Invalid params error naming sessionId when the
    last turn did not end with an error, a turn runs or waits in the session, or it is a sub-agent's
    session (retry its parent's turn)."""

    session_id: str


GrantScope = Literal["session", "project"]


class ApproveParams(Params):
    """`agent/approve`: answer a permission question. With `edit` (decision "once"), accept that
    change instead of the proposal: the permission-request's `edit` has one TextEdit per hunk,
    each replacing whole lines; send back some of them (same documents and versions), or your own
    edits against the text the proposal was made from, or CreateFile plus its text for a proposed
    new file. Exactly that is applied, and the model is told the diff from its proposal (with
    `feedback` as the user's note); an `edit` that changes nothing is a reject. Any other file, a
    delete or rename, overlapping edits or another decision is an Invalid params error naming
    `edit`, and the question stays open.

    An `ask_user` question (permission-request with tool "ask_user", its `input` the question and
    its `choices`) is answered with decision "once" and the answer (a choice's text or the
    user's own words) in `feedback`; "reject" (or "once" with no feedback) declines it."""

    session_id: str
    request_id: str
    decision: Literal["once", "always", "reject"]
    feedback: str | None = None
    # Where an "always" is kept: this session (default), or every later session of this
    # workspace root ("project", persisted; `agentls permissions` lists and revokes them).
    scope: GrantScope = "session"
    # The change the user accepts instead of the proposal (decision "once"): a WorkspaceEdit with
    # a subset of the proposal's hunks (its TextEdits, one per hunk), or the proposal as the user
    # edited it. TextDocumentEdits on the proposal's documents and versions, each against the
    # text the proposal was made from; CreateFile plus its text for a proposed new file. The
    # server applies exactly that, and tells the model what differs from its proposal.
    edit: dict[str, Any] | None = None


class ApproveResult(Result):
    pass


class ListSessionsParams(Params):
    """`agent/listSessions`; with a query, only the sessions whose title holds it or whose
    messages' text holds all its words (as words or their starts); a query of no words lists
    them all."""

    query: str | None = None


class SessionInfo(Result):
    session_id: str
    title: str
    created_at: int
    updated_at: int
    busy: bool
    model: str
    # What the session cost, whole: its sub-agents' usage and any stopped step count into it
    # (`estimated` when some of it is an estimate); subagentUsage: the sub-agents' share of it.
    usage: Usage
    subagent_usage: Usage | None = None
    mode: SessionMode = "build"
    # A sub-agent's session (the task tool's): its parent session and agent type. Its history
    # is read with agent/getMessages; it takes no prompts of its own.
    parent_id: str | None = None
    agent: str | None = None
    # The session's last answer as one short line (the panel's history); absent without one.
    preview: str | None = None
    # A background session of the workspace's repository (agent/prompt background: true).
    background: BackgroundInfo | None = None


class ListSessionsResult(Result):
    sessions: list[SessionInfo]


class GetMessagesParams(Params):
    """history "all": every stored message, those before a compaction summary too (marked
    summarized); without it the session from its summary in force on, as the model sees it."""

    session_id: str
    history: Literal["all"] | None = None


class MessageInfo(Result):
    id: str
    role: Literal["user", "assistant"]
    created_at: int
    parts: list[Part]
    finish_reason: FinishReason | None = None
    reverted: bool | None = None
    # With history "all": the message is before the compaction summary in force.
    summarized: bool | None = None


class GetMessagesResult(Result):
    messages: list[MessageInfo]
    # The session's todo list (todowrite) and mode, as they are now.
    todos: list[TodoItem] = Field(default_factory=list)
    mode: SessionMode = "build"


class RevertParams(Params):
    """`agent/revert`: back to just before a user message (a checkpoint). "code" restores the
    files the agent changed since then (one workspace edit); "conversation" drops the message and
    everything after it (restorable with agent/unrevert); "both" does both. dryRun: only say what
    it would touch. A message reverted already is refused (agent/unrevert brings it back); a file
    that is now a link, in a folder that is now one, or a directory is a conflict, never written
    through."""

    session_id: str
    message_id: str
    scope: RevertScope = "both"
    dry_run: bool = False


class RevertResult(Result):
    # The files restored (or, with dryRun, that would be).
    files: list[str]
    # Files the user changed after the agent's edit: left as they are, with their three versions.
    conflicts: list[RevertConflict] = Field(default_factory=list)
    bash_not_undone: bool | None = None
    # The bash commands run since the checkpoint, whose effects are not undone.
    bash_commands: list[str] = Field(default_factory=list)
    # scope conversation/both: the dropped user message's text (for the prompt box).
    prompt: str | None = None
    note: str | None = None


class DiagnosticsParams(Params):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    uri: str
    version: int | None = None
    diagnostics: list[dict[str, Any]]


class RunOnSelectionParams(Params):
    session_id: str | None = None
    instruction: str = Field(min_length=1)
    uri: str
    range: Range
    # "plan": the instruction runs in plan mode, in a new session unless session_id names one.
    mode: SessionMode | None = None


class RunOnSelectionResult(Result):
    session_id: str


class AgentInitOptions(Params):
    """`initializationOptions.agent`; the same shape arrives under `agent` in didChangeConfiguration."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    model: str | None = None
    permissions: dict[str, Any] | list[dict[str, Any]] | None = None
    max_steps: int | None = None
    # MCP servers, Claude Code's shape ({name: {command, args, env, cwd?, timeout?} or
    # {type: "http", url, headers}}), added to those of the config files (see mcp/config.py).
    mcp_servers: dict[str, Any] | None = None
    # Whether the editor trusts the workspace (VS Code: vscode.workspace.isTrusted). It confirms
    # no content: a workspace config file (.agentls/config.json, .mcp.json) applies only in the
    # content the user confirmed (`agentls trust`, or "Apply" to agent/confirmWorkspaceConfig,
    # which is sent only when this is true); a new or changed one only tightens meanwhile. A
    # later didChangeConfiguration or agent/workspaceTrust that sets it reloads the settings
    # without a restart.
    workspace_trusted: bool | None = Field(default=None, strict=True)


class WorkspaceTrustParams(Params):
    """Client -> server notification `agent/workspaceTrust`: the editor's trust in the workspace
    changed (VS Code: onDidGrantWorkspaceTrust). The settings are loaded again at once (no
    restart); when `trusted`, the server asks (agent/confirmWorkspaceConfig) about each workspace
    config file whose content the user has not confirmed, and applies it only on "Apply"."""

    trusted: bool = Field(strict=True)


class ClientAgentCapabilities(Params):
    """`capabilities.experimental.agent` of the client."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    diagnostics_push: bool = False
    approvals: bool = False
    saves_edits: bool = False
    # The LSP methods the client answers in agent/languageRequest (from its other language
    # servers); names outside LANGUAGE_METHODS are ignored.
    language_requests: list[str] = Field(default_factory=list)


LanguageMethod = Literal[
    "textDocument/definition",
    "textDocument/typeDefinition",
    "textDocument/implementation",
    "textDocument/references",
    "textDocument/hover",
    "textDocument/documentSymbol",
    "workspace/symbol",
    "textDocument/prepareRename",
    "textDocument/rename",
    "textDocument/prepareCallHierarchy",
    "callHierarchy/incomingCalls",
    "callHierarchy/outgoingCalls",
    "textDocument/diagnostic",
    "textDocument/codeAction",
    "codeAction/resolve",
    "workspace/executeCommand",
]
LANGUAGE_METHODS: frozenset[str] = frozenset(get_args(LanguageMethod))


class LanguageRequestParams(Params):
    """Server -> client request `agent/languageRequest`: the agent's language tools (references,
    rename, ...) ask the editor's own language servers. Sent only for methods the client declared
    in capabilities.experimental.agent.languageRequests; `params` are that method's plain LSP
    params, as an editor would send them to a language server. The result is the method's plain
    LSP result, or null, from the client's other language servers (the document opened first),
    never from agentls itself. The server checks it against the method's LSP result type: a
    malformed result, a JSON-RPC error, or no answer within `languageTimeoutS` (default 15 s)
    becomes a tool error naming the method. Methods the client did not declare go to the
    servers of the `languageServers` setting.

    `workspace/executeCommand` is the exception to "plain LSP result": the command must not
    change anything itself, so the client runs it only where it can capture the edits the
    language server sends back with `workspace/applyEdit` (answering them without applying), and
    answers {"result": the command's result, "edits": [every captured WorkspaceEdit]}. A client
    that cannot capture them (VS Code applies them directly) does not declare the method."""

    method: LanguageMethod
    params: dict[str, Any]


class McpStatusParams(Params):
    """`agent/mcpStatus`: the MCP servers of the workspace. `start`: start those not started yet
    (as a session's first turn would) before answering."""

    start: bool = Field(default=False, strict=True)


class McpToolInfo(WireModel):
    # As the model sees it (mcp__<server>__<tool>), and as the server lists it.
    name: str
    remote_name: str
    # The server's readOnlyHint: shown, never trusted (its calls ask like any other).
    read_only_hint: bool = False


class McpServerInfo(WireModel):
    name: str
    transport: str  # "stdio" or "http"; "?" for an entry that could not be read
    target: str  # the command line, or the url
    status: Literal["not started", "starting", "running", "failed", "stopped", "bad config"]
    # Why it failed: names the server, ends with its stderr's last lines.
    error: str | None = None
    tools: list[McpToolInfo] = Field(default_factory=list)


class McpStatusResult(Result):
    servers: list[McpServerInfo]


class ListCommandsParams(Params):
    """`agent/listCommands`: the commands a prompt "/NAME args" runs: the built-ins (compact,
    clear, model), the user's ~/.config/agentls/commands/NAME.md and, when the workspace is
    trusted, its .agentls/commands/NAME.md."""


class CommandInfo(WireModel):
    name: str
    description: str
    # mcp: an MCP server's prompt; skill: a skill (agent/listSkills) run by its name
    source: Literal["builtin", "user", "workspace", "mcp", "skill"]
    # The agent type (the `agents` setting) its front matter names: its turn runs as that type.
    agent: str | None = None


class ListCommandsResult(Result):
    commands: list[CommandInfo]


class ListModelsParams(Params):
    """`agent/listModels`: the models `agentls models` lists (Anthropic's, then each provider's
    of the `providers` setting), with their prices, for the panel's picker."""


class ModelEntry(WireModel):
    provider: str
    type: Literal["openai", "bedrock", "vertex", "anthropic"]  # the provider's API
    model: str  # the id agent/setModel takes
    api_model: str  # the id sent to the provider's API
    context_window: int
    max_output: int
    input_usd_per_m_tok: float
    output_usd_per_m_tok: float
    images: bool
    thinking: bool
    caching: bool
    default: bool
    # The environment variable of the provider's API key (None: none agentls can check), and
    # whether the server has it.
    key_env: str | None
    has_key: bool


class ListModelsResult(Result):
    models: list[ModelEntry]
    default_model: str  # the model setting's, which a new session gets


class SetModelParams(Params):
    """`agent/setModel`: the session's model from its next turn on, kept in the store. A model
    of a provider nobody configured is an Invalid params error naming model."""

    session_id: str
    model: str = Field(min_length=1)


class SetModelResult(Result):
    model: str


class SetApiKeyParams(Params):
    """`agent/setApiKey`: the key of a provider (the environment variable a model entry's keyEnv
    names), used by the running server from the next model call on, without a restart. An
    empty key forgets it. Never stored, logged nor passed to a child process. Invalid params
    naming name when no provider reads that variable."""

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    key: str = Field(max_length=2000)


class SetApiKeyResult(Result):
    has_key: bool  # whether the server now has a key for that variable


class RenameSessionParams(Params):
    session_id: str
    title: str = Field(min_length=1, max_length=500)


class RenameSessionResult(Result):
    title: str  # as kept (cleaned)


class DeleteSessionParams(Params):
    """`agent/deleteSession`: the session leaves the store with everything of it (messages,
    grants, file changes) and its sub-agents' sessions. Invalid params naming sessionId while a
    turn runs in it."""

    session_id: str


class DeleteSessionResult(Result):
    deleted: list[str]  # the session ids deleted


class ForkSessionParams(Params):
    """`agent/forkSession`: a new session with the history up to and including messageId."""

    session_id: str
    message_id: str
    title: str | None = Field(default=None, max_length=500)  # default "Fork of <title>"


class ForkSessionResult(Result):
    session_id: str
    title: str


class ExportSessionParams(Params):
    """`agent/exportSession`: the whole session (every message, its tool calls) as Markdown."""

    session_id: str


class ExportSessionResult(Result):
    markdown: str


# method -> (params model, result model); notifications have no result model.
REQUESTS: dict[str, tuple[type[Params], type[Result]]] = {
    "agent/newSession": (NewSessionParams, NewSessionResult),
    "agent/prompt": (PromptParams, PromptResult),
    "agent/cancel": (CancelParams, CancelResult),
    "agent/retry": (RetryParams, PromptResult),
    "agent/setMode": (SetModeParams, SetModeResult),
    "agent/approve": (ApproveParams, ApproveResult),
    "agent/listSessions": (ListSessionsParams, ListSessionsResult),
    "agent/getMessages": (GetMessagesParams, GetMessagesResult),
    "agent/revert": (RevertParams, RevertResult),
    "agent/unrevert": (UnrevertParams, UnrevertResult),
    "agent/listReview": (ListReviewParams, ListReviewResult),
    "agent/review": (ReviewParams, ReviewResult),
    "agent/mcpStatus": (McpStatusParams, McpStatusResult),
    "agent/listCommands": (ListCommandsParams, ListCommandsResult),
    "agent/listSkills": (ListSkillsParams, ListSkillsResult),
    "agent/listModels": (ListModelsParams, ListModelsResult),
    "agent/setModel": (SetModelParams, SetModelResult),
    "agent/setApiKey": (SetApiKeyParams, SetApiKeyResult),
    "agent/renameSession": (RenameSessionParams, RenameSessionResult),
    "agent/deleteSession": (DeleteSessionParams, DeleteSessionResult),
    "agent/forkSession": (ForkSessionParams, ForkSessionResult),
    "agent/exportSession": (ExportSessionParams, ExportSessionResult),
    "agent/proposeEdit": (ProposeEditParams, ProposeEditResult),
    "agent/backgroundDiff": (BackgroundDiffParams, BackgroundDiffResult),
    "agent/backgroundApply": (BackgroundApplyParams, BackgroundApplyResult),
    "agent/backgroundRemove": (BackgroundRemoveParams, BackgroundRemoveResult),
}
CLIENT_NOTIFICATIONS: dict[str, type[Params]] = {
    "agent/diagnostics": DiagnosticsParams,
    "agent/workspaceTrust": WorkspaceTrustParams,
}
# Server -> client requests whose result is a plain LSP result (described in their params' doc).
SERVER_REQUESTS: dict[str, type[Params]] = {
    "agent/languageRequest": LanguageRequestParams,
}
# Server -> client requests with a result of their own.
SERVER_QUESTIONS: dict[str, tuple[type[Params], type[Result]]] = {
    "agent/confirmWorkspaceConfig": (ConfirmWorkspaceConfigParams, ConfirmWorkspaceConfigResult),
}
COMMANDS: dict[str, tuple[type[Params], type[Result]]] = {
    "agent.approve": (ApproveParams, ApproveResult),
    "agent.runOnSelection": (RunOnSelectionParams, RunOnSelectionResult),
}
