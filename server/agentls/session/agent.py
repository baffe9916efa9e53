"""Sessions and the loop: a turn answers one prompt in steps (stream, run tools, repeat).

One `Agent` serves one workspace. Each session keeps its history in memory between steps (loaded
from the store once), and its API form too (history.ApiHistory: a step converts only the new
messages), queues prompts first-in first-out, and runs each turn in its own task so a cancel
reaches the stream and every running tool.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from agentls.config import Settings
from agentls.config_home import config_home
from agentls.events import (
    ErrorEvent,
    PermissionRequestEvent,
    PermissionResolvedEvent,
    ProgressEvent,
    RetryEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnd,
    TurnStart,
    UsageEvent,
)
from agentls.history import (
    ApiHistory,
    ContextPart,
    FinishReason,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolPart,
    Usage,
    clean_json,
    clean_text,
    new_id,
    now_ms,
    repair_interrupted,
)
from agentls.model.base import (
    BlockStart,
    BlockStop,
    MessageBegin,
    MessageEnd,
    ModelRequest,
    Provider,
    ProviderError,
    RetryNotice,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
)
from agentls.model.catalog import model_info, price
from agentls.model.thinking import thinking_request
from agentls.permission.broker import Answer, ApprovalBroker, Decision
from agentls.permission.grants import Grant, grant_for
from agentls.permission.rules import PathFilter, PermissionRules, Rule, secret_globs
from agentls.session.compaction import Compactor
from agentls.session.rules_files import RulesFiles
from agentls.session.system_prompt import build_system
from agentls.store import ProjectGrant, SessionRecord, Store, StoreError, default_db_path
from agentls.tools.base import (
    PermissionDenied,
    PermissionQuery,
    ReadLedger,
    ToolError,
    ToolResult,
)
from agentls.tools.registry import ToolRegistry, default_tools
from agentls.tools.sandbox import SandboxPolicy
from agentls.trust import restricted
from agentls.workspace.protocol import EditOutcome, Workspace

log = logging.getLogger(__name__)

EventSink = Callable[[Any], None]
# Decides an "ask": returns once / always / reject (with feedback). Agent.ask is the one every
# front end uses (through a QuestionPresenter); tests may supply their own.
Asker = Callable[["AskContext"], Awaitable[Answer]]

CANCELLED_OUTPUT = "Cancelled: the user stopped the turn before this tool call finished."


@dataclass
class TurnResult:
    session_id: str
    message_id: str | None
    finish_reason: FinishReason
    text: str
    usage: Usage
    error: str | None = None


@dataclass
class RevertOutcome:
    files: list[str]
    bash_not_undone: bool
    problems: list[str]


class SessionBusyError(Exception):
    """The session is running a turn; the operation needs it idle."""


@dataclass
class AskContext:
    session_id: str
    call_id: str
    query: PermissionQuery
    agent: Agent
    # What "always" would allow, in the words to show (the grant's label); None: "always" is
    # not offered for this call, and an "always" answer counts as "once".
    always: str | None = None


@dataclass
class Question:
    """A permission question as a front end shows it; answered with Agent.approve(session_id,
    request_id, ...)."""

    session_id: str
    request_id: str
    call_id: str
    query: PermissionQuery
    # What "always" would allow (the grant's label); None: "always" is not offered.
    always: str | None = None
    # The edit as the front end's own wire form (an LSP WorkspaceEdit), set by its presenter:
    # the permission-request event carries it.
    edit: dict[str, Any] | None = None


# How a front end shows a question while Agent.ask waits for its answer: entered before the
# permission-request event is emitted (it may set question.edit), left once the question is
# answered, expired or cancelled (it stops showing it then).
QuestionPresenter = Callable[[Question], AbstractContextManager[None]]


@dataclass(eq=False)
class _Ticket:
    cancelled: bool = False


@dataclass
class SessionState:
    record: SessionRecord
    messages: list[Message]
    # The API form of `messages`, kept between steps: each step converts only what is new.
    api: ApiHistory = field(default_factory=ApiHistory)
    ledger: ReadLedger = field(default_factory=ReadLedger)
    grants: list[Rule] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    queue: list[_Ticket] = field(default_factory=list)
    task: asyncio.Task[TurnResult] | None = None
    # The running turn was cancelled and is storing what it had (finish_cancelled): another
    # cancel must not interrupt that.
    finishing: bool = False
    # Operations using the state outside a turn (a revert): it stays loaded while they run.
    users: int = 0

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def idle(self) -> bool:
        """Nothing running, waiting or holding it: it may be dropped from memory (see
        Agent.keep_idle_sessions) and loaded again from the store when next used."""
        return not self.busy and not self.queue and not self.lock.locked() and self.users == 0


# How many idle sessions an Agent keeps loaded (their history, its API form, what the model read);
# the least recently used beyond them are dropped from memory: a long-running server would
# otherwise keep every session it ever opened (tens of MB for a long one). A dropped session is
# loaded again from the store when next used; what it loses is the record of which files the
# model has read, as after a restart.
KEEP_IDLE_SESSIONS = 8


def _stored_rule(tool: str, pattern: str | None, action: str, exact: bool) -> Rule:
    """A grant read from the store as a rule (exact: a literal pattern; False for the grants
    of databases from before the flag, which keep their glob meaning)."""
    return Rule(tool=tool, pattern=pattern, action=action, exact=exact)  # type: ignore[arg-type]


def rules_of(settings: Settings) -> PermissionRules:
    """The configured rules, with the secret globs (built-in and `secretPatterns`) asking."""
    rules = PermissionRules.from_config(
        settings.permissions, secret_patterns=secret_globs(settings.secret_patterns)
    )
    # An untrusted workspace config's deny and ask rules: a floor that only ever tightens.
    return restricted(rules, settings.workspace_restrictions)


# The garbage collector. A long session keeps its history in memory (5,000 messages: 50,000
# objects the collector tracks), and the process its modules (the SDK, pydantic, lsprotocol:
# 200,000 more). A full collection scans all of them, 100 to 200 ms here, and building a large
# request (the SDK copies the whole history) triggers one about every step. So the long-lived
# objects are moved out of its reach with gc.freeze(): at the start of each turn (after a
# collection of what is not frozen yet, so that the garbage of the previous turn goes first)
# and at the end of a session's load. A full collection then scans only what was made since.
#
# The trade-off: an object alive at a freeze is never examined by the collector again. Freed by
# its reference count it goes as usual (the history, its API form, messages dropped by a
# compaction, requests); only one that later dies in a reference cycle stays until the process
# ends. Hence the freezing points: the start of a turn, before the turn's own objects exist,
# when what is alive is the process's long-lived state (modules, sessions, their histories and
# caches), and the end of a load, which is quick; and neither while a turn is running (in any
# session: its objects, a turn and its compactor, the SDK's stream, die in cycles). A process
# always running some turn keeps the collector's default behaviour for what it makes then.

# Whether the heap was frozen yet (gc.get_freeze_count() would say, but it counts the frozen
# objects one by one: 20 ms for 250,000).
_frozen = False
_loads_pausing = 0  # how many collector_paused() blocks are running
_turns_running = 0  # how many turns are running, in every Agent of the process


def freeze_heap() -> None:
    """Collect what is not frozen yet, then freeze everything alive (see above); not while a
    turn is running. The first freeze of the process does not collect: that would scan the
    whole heap (100 ms or more), for the little garbage that startup leaves."""
    global _frozen
    if not gc.isenabled() or _turns_running:
        return  # whoever disabled the collector manages it (or a load is under way)
    if _frozen:
        gc.collect()
    gc.freeze()
    _frozen = True


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collection during the block, everything alive at its end frozen (without a
    collection; and not while a turn is running). For a session's load: the tens of thousands of
    objects it builds all survive, so collecting among them as they come is wasted time. Blocks
    may overlap (two sessions loading): the collector comes back when the last one ends. A
    collector already disabled by someone else is left alone."""
    global _loads_pausing, _frozen
    if not _loads_pausing and not gc.isenabled():
        yield
        return
    _loads_pausing += 1
    gc.disable()
    try:
        yield
    finally:
        _loads_pausing -= 1
        if not _loads_pausing:
            if not _turns_running:
                gc.freeze()
                _frozen = True
            gc.enable()


def make_provider(model: str, settings: Settings) -> Provider:
    if model.startswith("scripted:"):
        from agentls.model.scripted import ScriptedProvider

        return ScriptedProvider(model.removeprefix("scripted:"))
    from agentls.model.anthropic_provider import AnthropicProvider

    return AnthropicProvider(
        max_attempts=settings.api_max_attempts,
        base_delay_s=settings.api_retry_base_delay_s,
        max_delay_s=settings.api_max_retry_delay_s,
        timeout_s=settings.api_timeout_s,
        prompt_caching=settings.prompt_caching,
    )


class Agent:
    """The agent core for one workspace: sessions, the loop, tools, permissions, persistence."""

    def __init__(
        self,
        *,
        store: Store,
        workspace: Workspace,
        settings: Settings,
        registry: ToolRegistry | None = None,
        asker: Asker | None = None,
        provider_factory: Callable[[str, Settings], Provider] = make_provider,
        watch_instructions: bool = True,
        keep_idle_sessions: int = KEEP_IDLE_SESSIONS,
        presenter: QuestionPresenter | None = None,
    ) -> None:
        self.store = store
        self.workspace = workspace
        self.root = Path(os.path.realpath(workspace.root))
        self.settings = settings
        self.registry = registry or ToolRegistry(default_tools())
        self.broker = ApprovalBroker(timeout_s=settings.approval_timeout_s)
        self.asker: Asker = asker or self.ask
        # How the front end shows a question (see Agent.ask); None: only the events say it.
        self.presenter = presenter
        # Whether aclose() closes the store too (an agent from Agent.open).
        self._owns_store = False
        self._provider_factory = provider_factory
        self._providers: dict[str, Provider] = {}
        # Least recently used first (see KEEP_IDLE_SESSIONS).
        self._sessions: OrderedDict[str, SessionState] = OrderedDict()
        self.keep_idle_sessions = max(1, keep_idle_sessions)
        self._closing = False
        # Prompts waiting for their session to load (not in its queue yet), and how many cancels
        # each session had while some were: a cancel then ends those prompts too.
        self._prompts_loading: dict[str, int] = {}
        self._cancels: dict[str, int] = {}
        self._sinks: list[EventSink] = []
        # Who holds a session's turn lock in the store (store/session_locks.py): this agent.
        self.lock_owner = new_id("agent")
        self.rules = rules_of(settings)
        # The grants given "always, in this project" for this root (Store.list_project_grants),
        # read again whenever a session is created or loaded: after the configured rules and
        # before each session's own grants (see CallContext.rules).
        self.project_grants: list[Rule] = []
        # AGENTS.md / CLAUDE.md, watched from the first turn on (see rules_files.py). A one-shot
        # `agentls run` does without the watcher: the stat check at each step sees every edit.
        self.rules_files = RulesFiles(self.root, config_home(), watch=watch_instructions)

    @classmethod
    async def open(
        cls,
        *,
        settings: Settings,
        root: Path | str | None = None,
        workspace: Workspace | None = None,
        db_path: Path | str | None = None,
        **options: Any,
    ) -> Agent:
        """An agent with its own store (at db_path, by default the user's database), closed by
        aclose(). The workspace is the given one, else the disk under `root`. Raises StoreError
        when the store cannot be opened. `options` are the constructor's (asker, presenter,
        watch_instructions, ...)."""
        if workspace is None:
            if root is None:
                raise ValueError("Agent.open needs a root or a workspace")
            from agentls.workspace.disk import DiskWorkspace

            workspace = DiskWorkspace(Path(root), lambda: settings)
        store = await Store.open(default_db_path() if db_path is None else db_path)
        try:
            agent = cls(store=store, workspace=workspace, settings=settings, **options)
        except BaseException:
            await store.close()
            raise
        agent._owns_store = True
        return agent

    # ---- configuration and events -------------------------------------------------------

    def update_settings(self, settings: Settings) -> None:
        self.settings = settings
        self.rules = rules_of(settings)
        self.broker.timeout_s = settings.approval_timeout_s

    def subscribe(self, sink: EventSink) -> Callable[[], None]:
        self._sinks.append(sink)
        return lambda: self._sinks.remove(sink)

    def emit(self, event: Any) -> None:
        for sink in list(self._sinks):
            try:
                sink(event)
            except Exception:  # a broken front end must not break the turn
                log.exception("event sink failed")

    def provider(self, model: str) -> Provider:
        if model not in self._providers:
            self._providers[model] = self._provider_factory(model, self.settings)
        return self._providers[model]

    async def aclose(self) -> None:
        self._closing = True
        # A copy: a request handled meanwhile may load or drop sessions.
        states = list(self._sessions.values())
        for state in states:
            if state.task is not None and not state.task.done():
                state.task.cancel()
        for state in states:
            if state.task is not None:
                try:
                    await state.task
                except BaseException:  # noqa: BLE001 - shutting down
                    pass
        for provider in self._providers.values():
            await provider.aclose()
        await self.rules_files.aclose()
        if self._owns_store:
            await self.store.close()

    # ---- sessions -----------------------------------------------------------------------

    async def load_project_grants(self) -> None:
        """Read this root's project grants (given here, or by another agentls process since)."""
        self.project_grants = [
            _stored_rule(g.tool, g.pattern, g.action, g.exact)
            for g in await self.store.list_project_grants(str(self.root))
        ]

    async def new_session(
        self, title: str | None = None, model: str | None = None
    ) -> SessionRecord:
        record = await self.store.create_session(
            title=clean_text(title) if title else "New session",
            cwd=str(self.root),
            model=model or self.settings.model,
        )
        state = SessionState(record=record, messages=[])
        self._sessions[record.id] = state
        self._drop_idle_sessions(keep=state)
        return record

    async def list_sessions(
        self, limit: int = 1000, cwd: Path | str | None = None
    ) -> list[SessionRecord]:
        """The stored sessions, newest first; of the workspace `cwd` only when given."""
        where = None if cwd is None else os.path.realpath(cwd)
        return await self.store.list_sessions(limit=limit, cwd=where)

    async def messages(self, session_id: str) -> list[Message]:
        """The session's history as the model sees it (from its summary on); KeyError if
        unknown."""
        return list((await self.session(session_id)).messages)

    async def set_model(self, session_id: str, model: str) -> None:
        """Use `model` for the session's next turns (kept in the store)."""
        state = await self.session(session_id)
        if state.record.model != model:
            state.record.model = model
            await self.store.update_session(session_id, model=model)

    async def list_project_grants(self, root: Path | str | None = None) -> list[ProjectGrant]:
        """The grants given "always, in this project" for `root` (default: this agent's), in the
        order `revoke_project_grant` numbers them (from 1)."""
        return await self.store.list_project_grants(self._grant_root(root))

    async def revoke_project_grant(
        self, number: int, root: Path | str | None = None
    ) -> ProjectGrant | None:
        """Remove grant `number` of list_project_grants (from 1); None when there is none."""
        where = self._grant_root(root)
        revoked = await self.store.revoke_project_grant(where, number)
        if revoked is not None and where == str(self.root):
            await self.load_project_grants()
        return revoked

    def _grant_root(self, root: Path | str | None) -> str:
        return str(self.root) if root is None else os.path.realpath(root)

    def pending_questions(self, session_id: str) -> list[str]:
        """The request ids of the session's questions that wait for an answer (approve)."""
        return self.broker.pending_for(session_id)

    async def session(self, session_id: str) -> SessionState:
        state = self._sessions.get(session_id)
        if state is not None:
            self._sessions.move_to_end(session_id)
            return state
        record = await self.store.get_session(session_id)
        if record is None:
            raise KeyError(f"unknown sessionId {session_id!r}")
        # The history is long-lived: no collection while it is built, frozen after it.
        with collector_paused():
            messages = await self.store.load_messages(
                session_id, since_message_id=record.summary_message_id
            )
            grants = await self.store.list_grants(session_id)
        state = SessionState(record=record, messages=messages)
        state.grants = [_stored_rule(g.tool, g.pattern, g.action, g.exact) for g in grants]
        # Another task may have loaded it meanwhile; keep the first.
        state = self._sessions.setdefault(session_id, state)
        self._sessions.move_to_end(session_id)
        self._drop_idle_sessions(keep=state)
        return state

    def _drop_idle_sessions(self, keep: SessionState) -> None:
        """Drop the least recently used idle sessions beyond keep_idle_sessions (keep, about to
        be used, counts as one of them and stays)."""
        idle = [sid for sid, state in self._sessions.items() if state is not keep and state.idle]
        for sid in idle[: max(0, len(idle) - (self.keep_idle_sessions - 1))]:
            # Its last turn's task may hold an exception whose traceback leads back to the state:
            # a cycle the collector would not free (the heap is frozen, see freeze_heap).
            self._sessions.pop(sid).task = None

    async def revert(self, session_id: str, message_id: str) -> RevertOutcome:
        """Undo every file change the tools made from `message_id` on (newest first) and mark those
        messages reverted: kept for the record, no longer sent to the model."""
        state = await self.session(session_id)
        if state.busy or state.queue:
            raise SessionBusyError(f"session {session_id!r} is busy; cancel the turn first")
        state.users += 1  # loaded until the end: its messages' flags are set below
        try:
            return await self._revert(state, session_id, message_id)
        finally:
            state.users -= 1

    async def _revert(self, state: SessionState, session_id: str, message_id: str) -> RevertOutcome:
        """revert() with the session held loaded."""
        ids = [m.id for m in state.messages]
        if message_id not in ids:
            raise KeyError(f"unknown messageId {message_id!r} in session {session_id!r}")
        affected = state.messages[ids.index(message_id) :]
        changes = await self.store.list_file_changes(session_id, [m.id for m in affected])
        # The state to restore for each path is the one before its first change in the range.
        targets: dict[str, str | None] = {}
        for _, changed_path, before, _after in changes:
            targets.setdefault(changed_path, before)
        files: list[str] = []
        problems: list[str] = []
        for path_str, before in reversed(list(targets.items())):
            path = Path(path_str)
            try:
                current: str | None = await self.workspace.read_text(path)
            except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
                current = None
            if current == before:
                continue
            if before is None:
                outcome = await self.workspace.delete(path)
            else:
                outcome = await self.workspace.write_text(path, before, current)
            if outcome.applied:
                files.append(path_str)
                state.ledger.forget(path)
            else:
                problems.append(f"{path_str}: {outcome.reason}")
        for message in affected:
            if not message.reverted:
                message.reverted = True
                await self.store.update_message(message)
        bash_ran = any(p.tool == "bash" for m in affected for p in m.tool_parts())
        return RevertOutcome(files=files, bash_not_undone=bash_ran, problems=problems)

    def approve(
        self,
        session_id: str,
        request_id: str,
        decision: str,
        feedback: str | None = None,
        scope: str = "session",
    ) -> None:
        """Answer a permission request; raises ApprovalError for unknown/answered/expired ones.
        `scope` says where an "always" is kept: the session, or the project (its root)."""
        self.broker.answer(session_id, request_id, decision, feedback, scope)

    async def ask(self, ctx: AskContext) -> Answer:
        """The one ask path of every front end: a permission-request event, shown by the front
        end's presenter, answered through approve() (or expired after approvalTimeoutS, or
        cancelled with the turn), then a permission-resolved event."""
        request_id = self.broker.open(ctx.session_id)
        query = ctx.query
        question = Question(ctx.session_id, request_id, ctx.call_id, query, ctx.always)
        try:
            presenting = self.presenter(question) if self.presenter else nullcontext()
            with presenting:
                self.emit(
                    PermissionRequestEvent(
                        session_id=ctx.session_id,
                        request_id=request_id,
                        call_id=ctx.call_id,
                        tool=query.tool,
                        title=query.title,
                        input=query.input,
                        diff=query.diff,
                        edit=question.edit,
                        always=ctx.always,
                        sandboxed=query.sandboxed,
                    )
                )
                answer = await self.broker.wait(request_id)
        except asyncio.CancelledError:
            self.emit(
                PermissionResolvedEvent(
                    session_id=ctx.session_id, request_id=request_id, decision="cancelled"
                )
            )
            raise
        self.emit(
            PermissionResolvedEvent(
                session_id=ctx.session_id,
                request_id=request_id,
                decision=answer_taken(answer, ctx),
            )
        )
        return answer

    def is_busy(self, session_id: str) -> bool:
        state = self._sessions.get(session_id)
        return state is not None and (state.busy or bool(state.queue))

    # ---- prompting ----------------------------------------------------------------------

    async def prompt(
        self, session_id: str, text: str, context: list[ContextPart] | None = None
    ) -> TurnResult:
        """Run one turn; a prompt to a busy session waits its turn (first in, first out)."""
        cancels = self._cancels.get(session_id, 0)
        self._prompts_loading[session_id] = self._prompts_loading.get(session_id, 0) + 1
        try:
            state = await self.session(session_id)
        finally:
            left = self._prompts_loading.pop(session_id) - 1
            if left:
                self._prompts_loading[session_id] = left
        if self._cancels.get(session_id, 0) != cancels:  # cancelled while the session loaded
            return TurnResult(session_id, None, "cancelled", "", Usage())
        ticket = _Ticket()
        state.queue.append(ticket)
        try:
            async with state.lock:
                if ticket.cancelled:
                    return TurnResult(session_id, None, "cancelled", "", Usage())
                state.queue.remove(ticket)
                # Before the turn's task and objects exist (see "The garbage collector").
                freeze_heap()
                state.task = asyncio.create_task(self._run_turn(state, text, context or []))
                result = await state.task
        finally:
            if ticket in state.queue:
                state.queue.remove(ticket)
        return result

    async def cancel(self, session_id: str) -> bool:
        """Cancel the running turn and every queued prompt of the session (and those waiting for
        it to load)."""
        cancelled = False
        if self._prompts_loading.get(session_id):
            self._cancels[session_id] = self._cancels.get(session_id, 0) + 1
            cancelled = True
        state = self._sessions.get(session_id)
        if state is None:
            if not cancelled and await self.store.get_session(session_id) is None:
                raise KeyError(f"unknown sessionId {session_id!r}")
            return cancelled
        for ticket in state.queue:
            if not ticket.cancelled:
                ticket.cancelled = True
                cancelled = True
        if state.task is not None and not state.task.done():
            if not state.finishing:  # already cancelled, storing what it had
                state.task.cancel()
            cancelled = True
        return cancelled

    # ---- the turn -----------------------------------------------------------------------

    async def _run_turn(
        self, state: SessionState, text: str, context: list[ContextPart]
    ) -> TurnResult:
        global _turns_running
        session_id = state.record.id
        # One turn of a session at a time across processes too: a turn of it running in another
        # process raises SessionLockedError here, before anything of this one is stored.
        locked = False
        try:
            last = await self.store.lock_session(session_id, self.lock_owner)
            locked = True
            if last != (state.messages[-1].id if state.messages else None):
                # Another process ran a turn of it since it was loaded: continue from the store.
                await self._reload(state)
        except asyncio.CancelledError:
            _uncancel()
            await self._unlock(session_id)  # the store's write may have taken it meanwhile
            return TurnResult(session_id, None, "cancelled", "", Usage())
        except BaseException:
            if locked:
                await self._unlock(session_id)
            raise
        turn = _Turn(self, state)
        _turns_running += 1  # no freezing meanwhile (see "The garbage collector")
        try:
            try:
                # Read at each turn, so a grant given or revoked by another process counts now.
                await self.load_project_grants()
                return await turn.run(text, context)
            except asyncio.CancelledError:
                _uncancel()
                state.finishing = True
                return await turn.finish_cancelled()
        except StoreError as exc:  # a full disk, ...: the turn ends with an error event
            return await turn.fail_on_store(exc)
        finally:
            _turns_running -= 1
            turn.flush_deltas()  # nothing streamed stays unshown, whatever ended the turn
            await self._unlock(session_id)
            state.finishing = False

    async def _reload(self, state: SessionState) -> None:
        """Read the session's record and history again from the store (the turn lock held)."""
        record = await self.store.get_session(state.record.id)
        if record is None:
            raise KeyError(f"unknown sessionId {state.record.id!r}")
        with collector_paused():
            state.messages = await self.store.load_messages(
                record.id, since_message_id=record.summary_message_id
            )
        state.record = record
        state.api = ApiHistory()

    async def _unlock(self, session_id: str) -> None:
        """Let go of the session's turn lock, to the end even if cancelled meanwhile. When the
        store refuses (a full disk) the lock stays: this agent takes it again at its next turn,
        and it is stale for every other process once this one ends."""
        unlock = asyncio.ensure_future(self.store.unlock_session(session_id, self.lock_owner))
        try:
            await asyncio.shield(unlock)
        except asyncio.CancelledError:
            _uncancel()
            await asyncio.wait([unlock])
        except Exception:  # logged below
            pass
        if not unlock.cancelled() and unlock.exception() is not None:
            log.warning(
                "session %s: its turn lock was not released: %s", session_id, unlock.exception()
            )


class _Turn:
    """The state of one running turn, so a cancel at any await can be finished cleanly."""

    def __init__(self, agent: Agent, state: SessionState) -> None:
        self.agent = agent
        self.state = state
        self.store = agent.store
        self.session_id = state.record.id
        self.model = state.record.model
        self.usage = Usage()
        self.assistant: Message | None = None
        self.streaming: dict[int, Part] = {}  # block index -> part being streamed
        self.tool_json: dict[int, list[str]] = {}
        self.text_chunks: dict[int, list[str]] = {}  # raw deltas, cleaned when joined
        # Deltas received but not yet emitted: one event per batch (what arrived before the
        # stream next waits for the network), not one per delta. See queue_delta.
        self.pending_deltas: list[str] = []
        self.pending_kind: type[TextDeltaEvent] | type[ThinkingDeltaEvent] | None = None
        self.pending_flush: asyncio.Handle | None = None
        self.finished_blocks: set[int] = set()
        self.last_assistant_id: str | None = None
        self.final_text = ""
        self.recent_calls: list[str] = []
        self.compactor = Compactor(self)
        # The store writes of the stream phase, started and not waited for (see write_behind).
        self.writes: asyncio.Task[None] | None = None

    def emit(self, event: Any) -> None:
        self.flush_deltas()  # streamed text first: events keep the order they happened in
        self.agent.emit(event)

    def write_behind(self, write: Callable[[], Awaitable[None]]) -> None:
        """Start a store write, after the ones started before it, without waiting for it: the
        step goes on meanwhile (the SDK builds and sends the request while the new assistant
        message is stored; the stream goes on while a finished text block is). The step's end
        waits for them (settle_writes) before it stores the step as done, and before any other
        write of the turn: a completed step is on disk, in the order it happened, as before; so
        is a tool call before its tool-call event."""
        previous = self.writes

        async def after_previous() -> None:
            if previous is not None:
                await previous  # a failed write fails those after it: the first one is raised
            await write()

        task = asyncio.ensure_future(after_previous())
        task.add_done_callback(_outcome_fetched)
        self.writes = task

    async def settle_writes(self) -> None:
        """Wait for the writes write_behind started; raises the first that failed. A cancel of
        the turn meanwhile does not stop them (finish_cancelled waits for them again)."""
        writes = self.writes
        if writes is None:
            return
        await asyncio.shield(writes)
        if self.writes is writes:
            self.writes = None

    def queue_delta(self, kind: type[TextDeltaEvent] | type[ThinkingDeltaEvent], text: str) -> None:
        """A text or thinking delta for the front ends. The SDK hands over the events of one
        network read back to back without yielding to the event loop; they are emitted together
        once it does (call_soon), so a fast stream costs one event per read instead of one per
        delta, and a slow one still shows each delta as it arrives."""
        if self.pending_kind is not kind:
            self.flush_deltas()
            self.pending_kind = kind
        self.pending_deltas.append(text)
        if self.pending_flush is None:
            self.pending_flush = asyncio.get_running_loop().call_soon(self.flush_deltas)

    def flush_deltas(self) -> None:
        if self.pending_flush is not None:
            self.pending_flush.cancel()
            self.pending_flush = None
        if not self.pending_deltas:
            return
        kind, pending = self.pending_kind, self.pending_deltas
        self.pending_deltas = []
        # clean_text of the joined text equals the join of each delta cleaned: lone surrogates
        # stay lone when strings are concatenated.
        delta = clean_text("".join(pending))
        message_id = self.assistant.id if self.assistant is not None else None
        assert kind is not None
        self.agent.emit(kind(session_id=self.session_id, delta=delta, message_id=message_id))

    async def run(self, text: str, context: list[ContextPart]) -> TurnResult:
        state = self.state
        text = clean_text(text)  # JSON from an editor may carry lone surrogates
        user = Message(
            id=new_id("msg"),
            session_id=self.session_id,
            role="user",
            created_at=now_ms(),
            parts=[
                *(
                    ContextPart(
                        uri=clean_text(c.uri),
                        range=c.range,
                        text=None if c.text is None else clean_text(c.text),
                    )
                    for c in context
                ),
                TextPart(text=text),
            ],
        )
        state.messages.append(user)
        await self.store.add_message(user)
        if state.record.title == "New session" and text.strip():
            title = " ".join(text.split())[:60]
            state.record.title = title
            await self.store.update_session(self.session_id, title=title)
        self.emit(TurnStart(session_id=self.session_id, message_id=user.id, prompt=text))
        system = build_system(self.agent.root)
        max_steps = self.agent.settings.max_steps
        finish: FinishReason = "max_steps"
        error: str | None = None
        for _ in range(max_steps):
            try:
                await self.compactor.maybe_compact()
                stop_reason = await self.step(system)
            except ProviderError as exc:
                error = str(exc)
                await self.close_step_after_error(error)
                self.emit(ErrorEvent(session_id=self.session_id, message=error))
                finish = "error"
                break
            assert self.assistant is not None
            tool_parts = [p for p in self.assistant.parts if isinstance(p, ToolPart)]
            if tool_parts:
                doom = await self.run_tools(tool_parts)
                if doom:
                    finish = "doom_loop"
                    break
                continue
            finish = "max_tokens" if stop_reason == "max_tokens" else "end_turn"
            break
        return await self.end(finish, error)

    async def end(self, finish: FinishReason, error: str | None = None) -> TurnResult:
        if self.assistant is not None:
            self.final_text = self.assistant.text()
            if self.assistant.finish_reason != finish and finish != "end_turn":
                self.assistant.finish_reason = finish
                await self.store.update_message(self.assistant)
        self.emit(
            TurnEnd(
                session_id=self.session_id, finish_reason=finish, message_id=self.last_assistant_id
            )
        )
        return TurnResult(
            self.session_id, self.last_assistant_id, finish, self.final_text, self.usage, error
        )

    # ---- one step: stream one assistant message ---------------------------------------

    async def step(self, system: list[dict[str, Any]]) -> str | None:
        state = self.state
        settings = self.agent.settings
        max_output = model_info(self.model).max_output
        thinking, max_tokens = thinking_request(
            settings.thinking, self.model, min(settings.max_tokens, max_output), max_output
        )
        request = ModelRequest(
            model=self.model,
            system=self.agent.rules_files.system(system),
            messages=state.api.convert(state.messages),
            tools=self.agent.registry.schemas(),
            max_tokens=max_tokens,
            thinking=thinking,
        )
        assistant = Message(
            id=new_id("msg"), session_id=self.session_id, role="assistant", created_at=now_ms()
        )
        self.assistant = assistant
        self.last_assistant_id = assistant.id
        self.streaming = {}
        self.text_chunks = {}
        self.tool_json = {}
        self.finished_blocks = set()
        state.messages.append(assistant)
        # As it is now (no parts yet): the stream adds parts to the one in memory meanwhile.
        self.write_behind(
            partial(self.store.add_message, assistant.model_copy(update={"parts": []}))
        )
        stop_reason: str | None = None
        begin_usage = None
        end_usage = None
        provider = self.agent.provider(self.model)
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                part = self.streaming.get(event.index)
                if isinstance(part, TextPart):
                    self.text_chunks.setdefault(event.index, []).append(event.text)
                    self.queue_delta(TextDeltaEvent, event.text)
            elif isinstance(event, ToolInputDelta):
                self.tool_json.setdefault(event.index, []).append(event.partial_json)
            elif isinstance(event, ThinkingDelta):
                part = self.streaming.get(event.index)
                if isinstance(part, ThinkingPart):
                    self.text_chunks.setdefault(event.index, []).append(event.text)
                    self.queue_delta(ThinkingDeltaEvent, event.text)
            elif isinstance(event, SignatureDelta):
                part = self.streaming.get(event.index)
                if isinstance(part, ThinkingPart):
                    part.signature = (part.signature or "") + event.signature
            elif isinstance(event, BlockStart):
                new_part: Part
                if event.kind == "text":
                    new_part = TextPart(text="")
                elif event.kind == "thinking":
                    new_part = ThinkingPart(text="", data=event.data)
                else:
                    new_part = ToolPart(
                        call_id=event.tool_id or new_id("toolu"),
                        tool=clean_text(event.tool_name or ""),
                        input={},
                    )
                    self.tool_json[event.index] = []
                self.streaming[event.index] = new_part
                assistant.parts.append(new_part)
            elif isinstance(event, BlockStop):
                self.flush_text(event.index)
                await self.finish_block(event.index)
            elif isinstance(event, MessageBegin):
                begin_usage = event.usage
            elif isinstance(event, MessageEnd):
                stop_reason = event.stop_reason
                end_usage = event.usage
            elif isinstance(event, RetryNotice):
                await self.void_step()
                self.emit(
                    RetryEvent(
                        session_id=self.session_id,
                        attempt=event.attempt,
                        delay_ms=event.delay_ms,
                        reason=event.reason,
                    )
                )
        self.flush_text()
        await self.settle_writes()
        # Blocks the stream never closed (max_tokens inside a tool call) are dropped: a tool_use
        # with half its input can be neither run nor sent back.
        unfinished = [p for i, p in self.streaming.items() if i not in self.finished_blocks]
        for part in unfinished:
            if isinstance(part, ToolPart):
                assistant.parts.remove(part)
            elif isinstance(part, TextPart | ThinkingPart):
                await self.save_part(part)
        step_usage = self.record_usage(begin_usage, end_usage)
        assistant.finish_reason = (
            "tool_use" if stop_reason == "tool_use" else _finish_of(stop_reason)
        )
        # The message and the session's totals in one transaction (a commit and a few trips
        # to the database's thread saved at every step).
        await self.store.update_message(assistant, session_usage=step_usage)
        self.emit(
            UsageEvent(
                session_id=self.session_id,
                step=step_usage,
                turn=self.usage,
                session=self.state.record.usage,
            )
        )
        return stop_reason

    def flush_text(self, index: int | None = None) -> None:
        """Move streamed text into its part. Deltas are kept as chunks while streaming: growing a
        string on a pydantic model at every delta costs quadratic time on long answers."""
        indexes = list(self.text_chunks) if index is None else [index]
        for i in indexes:
            chunks = self.text_chunks.pop(i, None)
            part = self.streaming.get(i)
            if chunks and isinstance(part, TextPart | ThinkingPart):
                part.text = part.text + clean_text("".join(chunks))

    async def finish_block(self, index: int) -> None:
        part = self.streaming.get(index)
        if part is None or self.assistant is None:
            return
        self.finished_blocks.add(index)
        if isinstance(part, ToolPart):
            raw = "".join(self.tool_json.get(index, []))
            tool = self.agent.registry.get(part.tool)
            try:
                parsed = json.loads(raw) if raw.strip() else {}
                if not isinstance(parsed, dict):
                    raise ValueError("the input must be a JSON object")
                part.input = clean_json(parsed)
            except ValueError as exc:
                part.status = "error"
                part.output = (
                    f"Your input for {part.tool} was not valid JSON ({exc}); nothing was run."
                )
            part.title = tool.title(part.input) if tool else part.tool
            # Stored before it is announced: a front end that saw a call start finds it in the
            # history, whatever happens next (a kill). Text needs no such wait: it was shown
            # as it streamed, and what is stored of it is what was shown, or a start of it.
            self.save_part_behind(part)
            await self.settle_writes()
            self.emit(
                ToolCallEvent(
                    session_id=self.session_id,
                    call_id=part.call_id,
                    tool=part.tool,
                    input=part.input,
                    title=part.title,
                )
            )
        else:
            self.save_part_behind(part)

    def part_index(self, part: Part) -> int:
        """The part's place in the assistant message: by identity, as two parts may be equal
        (the same text twice), and each has its own row."""
        assert self.assistant is not None
        return next(i for i, p in enumerate(self.assistant.parts) if p is part)

    async def save_part(self, part: Part) -> None:
        assert self.assistant is not None
        await self.store.save_part(self.assistant.id, self.part_index(part), part)

    def save_part_behind(self, part: Part) -> None:
        """save_part with write_behind, of the part as it is now."""
        assert self.assistant is not None
        index = self.part_index(part)
        copy = part.model_copy(deep=True)
        self.write_behind(partial(self.store.save_part, self.assistant.id, index, copy))

    async def void_step(self) -> None:
        """A retry: whatever this step streamed is void; the history keeps no duplicate."""
        assert self.assistant is not None
        self.flush_deltas()  # what was shown before the retry, the retry event then voids
        await self.settle_writes()
        self.assistant.parts.clear()
        self.streaming = {}
        self.text_chunks = {}
        self.tool_json = {}
        self.finished_blocks = set()
        await self.store.clear_parts(self.assistant.id)

    def record_usage(self, begin: Any, end: Any) -> Usage:
        """The step's usage, set on the message and added to the turn's and the session's (in
        memory: step() stores it)."""
        assert self.assistant is not None
        input_tokens = (end.input_tokens if end and end.input_tokens else 0) or (
            begin.input_tokens if begin else 0
        )
        cache_read = (end.cache_read_tokens if end and end.cache_read_tokens else 0) or (
            begin.cache_read_tokens if begin else 0
        )
        cache_write = (end.cache_write_tokens if end and end.cache_write_tokens else 0) or (
            begin.cache_write_tokens if begin else 0
        )
        output_tokens = (end.output_tokens if end else 0) or (begin.output_tokens if begin else 0)
        step = Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
        step.cost_usd = price(self.model, step)
        self.assistant.usage = step
        self.usage = self.usage.add(step)
        self.state.record.usage = self.state.record.usage.add(step)
        return step

    async def close_step_after_error(self, error: str | None = None) -> None:
        """The provider failed for good: keep what was finished and the text streamed so far
        (what the user saw, as after a cancel); drop a half-streamed tool call."""
        if self.assistant is None:
            return
        self.flush_text()
        await self.settle_writes()
        self.assistant.error = error
        for index, part in list(self.streaming.items()):
            if index not in self.finished_blocks and isinstance(part, ToolPart):
                self.assistant.parts.remove(part)
        for part in self.assistant.parts:
            if isinstance(part, ToolPart) and not part.finished:
                part.status = "error"
                part.output = "Not run: the model request failed."
        # One transaction, so memory and disk agree: a reload sends the model what this
        # process would have sent (the unfinished text was never saved before).
        await self.store.replace_parts(self.assistant.id, list(self.assistant.parts))
        self.assistant.finish_reason = "error"
        await self.store.update_message(self.assistant)

    # ---- tools --------------------------------------------------------------------------

    async def run_tools(self, parts: list[ToolPart]) -> bool:
        """Run the message's tool calls; returns True when the doom loop ended the turn."""
        threshold = self.agent.settings.doom_loop_threshold
        batches: list[list[ToolPart]] = []
        for part in parts:
            tool = self.agent.registry.get(part.tool)
            read_only = tool is not None and tool.read_only
            if read_only and batches and batches[-1] and _all_read_only(self.agent, batches[-1]):
                batches[-1].append(part)
            else:
                batches.append([part])
        doom = False
        for batch in batches:
            runnable: list[ToolPart] = []
            for part in batch:
                if part.finished:  # invalid input, already answered
                    await self.publish_result(part)
                    continue
                if doom:
                    part.status = "error"
                    part.output = (
                        "Not run: the turn ended because the same call repeated (doom loop)."
                    )
                    await self.save_part(part)
                    await self.publish_result(part)
                    continue
                key = part.tool + "\0" + json.dumps(part.input, sort_keys=True)
                self.recent_calls.append(key)
                if (
                    len(self.recent_calls) >= threshold
                    and len(set(self.recent_calls[-threshold:])) == 1
                ):
                    doom = True
                    part.status = "error"
                    part.output = (
                        f"Not run: this is the {threshold}th identical {part.tool} call in a row. "
                        "The turn was stopped to break the loop; try a different approach."
                    )
                    await self.save_part(part)
                    await self.publish_result(part)
                    continue
                runnable.append(part)
            if not runnable:
                continue
            if len(runnable) == 1:
                await self.run_one(runnable[0])
            else:
                await asyncio.gather(*(self.run_one(p) for p in runnable))
        return doom

    async def run_one(self, part: ToolPart) -> None:
        tool = self.agent.registry.get(part.tool)
        part.status = "running"
        await self.save_part(part)
        ctx: CallContext | None = None
        try:
            if tool is None:
                known = ", ".join(self.agent.registry.names())
                raise ToolError(f"Unknown tool {part.tool!r}. The tools are: {known}.")
            params = tool.parse(part.input)
            ctx = CallContext(self, part)
            result = await tool.run(params, ctx)
        except asyncio.CancelledError:
            part.status = "cancelled"
            part.output = CANCELLED_OUTPUT
            raise
        except PermissionDenied as exc:
            result = ToolResult(str(exc), is_error=True)
        except ToolError as exc:
            result = ToolResult(str(exc), is_error=True)
        except StoreError:  # the store failed (a full disk): it ends the turn (fail_on_store)
            raise
        except Exception as exc:  # a tool bug must not end the session
            log.exception("tool %s failed", part.tool)
            result = ToolResult(
                f"The {part.tool} tool failed unexpectedly: {exc.__class__.__name__}: {exc}",
                is_error=True,
            )
        if ctx is not None and ctx.notes:
            result.output = "\n\n".join([result.output, *ctx.notes])
        part.status = "error" if result.is_error else "completed"
        # Tool output is data from anywhere (file names, command output): storable UTF-8.
        part.output = clean_text(result.output)
        if result.title:
            part.title = clean_text(result.title)
        await self.save_part(part)
        await self.publish_result(part)

    async def publish_result(self, part: ToolPart) -> None:
        self.emit(
            ToolResultEvent(
                session_id=self.session_id,
                call_id=part.call_id,
                tool=part.tool,
                output=part.output or "",
                is_error=part.is_error,
                status=part.status,
                title=part.title,
            )
        )

    # ---- store faults -------------------------------------------------------------------

    async def fail_on_store(self, exc: StoreError) -> TurnResult:
        """A store write failed (a full disk, a read-only or damaged database): the turn ends with
        an error event saying so, after the text streamed so far (already shown). What was
        committed stays; the session in memory is read again from the store, so that it holds
        what the store does (its unfinished tool calls marked interrupted)."""
        self.flush_text()
        self.flush_deltas()
        if self.writes is not None:  # writes already started: their failure is this one
            await asyncio.wait([self.writes])
            self.writes = None
        message = exc.message
        log.error("session %s: %s", self.session_id, message)
        if self.assistant is not None:
            self.final_text = self.assistant.text()
            self.assistant.error = message
            self.assistant.finish_reason = "error"
            try:  # a small write may still fit; nothing is lost when it does not
                await self.store.update_message(self.assistant)
            except StoreError:
                pass
        try:
            messages = await self.store.load_messages(
                self.session_id, since_message_id=self.state.record.summary_message_id, repair=False
            )
        except (StoreError, KeyError):
            pass
        else:
            repair_interrupted(messages)
            self.state.messages = messages
            self.state.api = ApiHistory()
        self.emit(ErrorEvent(session_id=self.session_id, message=message))
        self.emit(
            TurnEnd(
                session_id=self.session_id, finish_reason="error", message_id=self.last_assistant_id
            )
        )
        return TurnResult(
            self.session_id, self.last_assistant_id, "error", self.final_text, self.usage, message
        )

    # ---- cancel -------------------------------------------------------------------------

    async def finish_cancelled(self) -> TurnResult:
        assistant = self.assistant
        if assistant is not None:
            self.flush_text()
            await self.settle_writes()
            for index, part in list(self.streaming.items()):
                if index in self.finished_blocks:
                    continue
                if isinstance(part, ToolPart):
                    if part in assistant.parts:  # the step's end may have dropped it already
                        assistant.parts.remove(part)
                elif isinstance(part, TextPart):
                    part.cancelled = True
            for part in assistant.parts:
                if isinstance(part, ToolPart) and not part.finished:
                    part.status = "cancelled"
                    part.output = CANCELLED_OUTPUT
                    await self.publish_result(part)
                elif isinstance(part, ToolPart) and part.status == "cancelled":
                    await self.publish_result(part)
            # One transaction: the list may have shrunk, and the streamed text must be kept.
            await self.store.replace_parts(assistant.id, list(assistant.parts))
            assistant.finish_reason = "cancelled"
            await self.store.update_message(assistant)
            self.final_text = assistant.text()
        self.emit(
            TurnEnd(
                session_id=self.session_id,
                finish_reason="cancelled",
                message_id=self.last_assistant_id,
            )
        )
        return TurnResult(
            self.session_id, self.last_assistant_id, "cancelled", self.final_text, self.usage
        )


def _uncancel() -> None:
    """The current task's cancel is handled: later awaits of it are not cancelled again."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def _outcome_fetched(task: asyncio.Task[None]) -> None:
    """A write_behind task's outcome, fetched so that asyncio does not log "exception was never
    retrieved" for a failure nobody awaited (the turn ended another way)."""
    if not task.cancelled():
        task.exception()


def _all_read_only(agent: Agent, batch: list[ToolPart]) -> bool:
    for part in batch:
        tool = agent.registry.get(part.tool)
        if tool is None or not tool.read_only:
            return False
    return True


def _finish_of(stop_reason: str | None) -> FinishReason:
    if stop_reason == "max_tokens":
        return "max_tokens"
    return "end_turn"


class CallContext:
    """The ToolContext of one tool call: paths, permissions and progress, bound to its session."""

    def __init__(self, turn: _Turn, part: ToolPart) -> None:
        self._turn = turn
        self._agent = turn.agent
        assert turn.assistant is not None
        self.workspace: Workspace = RecordingWorkspace(
            turn.agent.workspace, turn.agent.store, turn.session_id, turn.assistant.id
        )
        self.ledger = turn.state.ledger
        self.call_id = part.call_id
        self.session_id = turn.session_id
        self._part = part
        settings = turn.agent.settings
        self.sandbox = SandboxPolicy(
            mode=settings.sandbox,
            network=settings.sandbox_network,
            secret_globs=secret_globs(settings.secret_patterns),
        )
        # Said to the model after the tool's own output (e.g. that "always" was not offered).
        self.notes: list[str] = []

    @property
    def rules(self) -> PermissionRules:
        """The configured rules, then the project's grants, then the session's."""
        return self._agent.rules.extended([*self._agent.project_grants, *self._turn.state.grants])

    def is_outside(self, path: Path) -> bool:
        root = self._agent.root
        return path != root and root not in path.parents

    def relative(self, path: Path) -> str:
        if self.is_outside(path):
            return str(path)
        rel = path.relative_to(self._agent.root).as_posix()
        return rel or "."

    def resolve_path(self, raw: str | None, *, tool: str) -> Path:
        root = self._agent.root
        if raw is None or raw.strip() in ("", "."):
            return root
        if "\0" in raw:
            raise ToolError("The path contains a NUL byte, which no file name can hold.")
        candidate = Path(os.path.expanduser(raw.strip()))
        if not candidate.is_absolute():
            candidate = root / candidate
        resolved = Path(os.path.realpath(candidate))
        if self.is_outside(resolved):
            if self.rules.opens_outside(tool, str(resolved)):
                return resolved
            raise ToolError(
                f"{raw} is outside the workspace ({root}). Paths outside it are refused unless a "
                "permission rule with a pattern naming that directory allows them."
            )
        return resolved

    def may_show(self, path: Path) -> bool:
        return (
            self.rules.evaluate(
                "read", self.relative(path), outside_workspace=self.is_outside(path)
            )
            == "allow"
        )

    def show_filter(self, base: Path) -> PathFilter | None:
        """may_show for every file under directory `base` at once, by paths relative to it: the
        rules are read once, not once a file (glob and grep list thousands)."""
        return self.rules.read_filter(self._agent.root, base)

    async def authorize(self, query: PermissionQuery) -> None:
        agent = self._agent
        sandboxed = query.sandboxed

        def evaluate(rules: PermissionRules) -> str:
            return rules.evaluate(
                query.tool,
                query.subject,
                outside_workspace=query.outside_workspace,
                root=agent.root,
                sandboxed=sandboxed,
            )

        # The configuration first: a grant answers a question, it never overrides a deny (one
        # configured after the grant was given included). Grants are allows at the end of the
        # list, so they can only turn this "ask" into "allow".
        action = evaluate(agent.rules)
        if action == "ask" and (agent.project_grants or self._turn.state.grants):
            action = evaluate(self.rules)
        if action == "allow":
            return
        if action == "deny":
            raise PermissionDenied(
                f"Permission denied: a rule forbids {query.tool} on {query.subject}. Do not retry it; "
                "tell the user or find another way."
            )
        grant = grant_for(
            query.tool, query.subject, outside_workspace=query.outside_workspace, root=agent.root
        )
        answer = await agent.asker(
            AskContext(
                self.session_id,
                self.call_id,
                query,
                agent,
                always=grant.label if grant is not None else None,
            )
        )
        if answer.decision == "always" and grant is None:
            self.notes.append(
                '(The user answered "always", but "always" is not offered for this call: it was '
                "allowed this once. A similar call will ask again.)"
            )
            return
        if answer.decision == "once":
            return
        if answer.decision == "always":
            assert grant is not None
            await self._grant_always(grant, answer.scope)
            return
        if answer.decision == "timeout":
            raise PermissionDenied(
                f"Permission for {query.title} was not given: the approval request timed out. Nothing was done."
            )
        feedback = (answer.feedback or "").strip()
        message = f"The user rejected this {query.tool} call ({query.title}). Nothing was done."
        if feedback:
            message += f"\nTheir feedback: {feedback}"
        raise PermissionDenied(message)

    async def _grant_always(self, grant: Grant, scope: str) -> None:
        """Keep exactly the grant's rules (what its label said), for this session or for every
        later session of this workspace root."""
        agent = self._agent
        for rule in grant.rules:
            if scope == "project":
                if rule not in agent.project_grants:
                    agent.project_grants.append(rule)
                await agent.store.add_project_grant(
                    str(agent.root),
                    rule.tool,
                    rule.pattern,
                    rule.action,
                    exact=rule.exact,
                    label=grant.label,
                )
            else:
                self._turn.state.grants.append(rule)
                await agent.store.add_grant(
                    self.session_id, rule.tool, rule.pattern, rule.action, exact=rule.exact
                )

    def progress(self, message: str) -> None:
        self._agent.emit(
            ProgressEvent(session_id=self.session_id, call_id=self.call_id, message=message)
        )


class RecordingWorkspace:
    """Delegates to the real workspace and records each applied change, so it can be reverted."""

    def __init__(self, inner: Workspace, store: Store, session_id: str, message_id: str) -> None:
        self._inner = inner
        self._store = store
        self._session_id = session_id
        self._message_id = message_id
        self.root = inner.root

    async def read_text(self, path: Path) -> str:
        return await self._inner.read_text(path)

    async def write_text(self, path: Path, new_text: str, old_text: str | None) -> EditOutcome:
        outcome = await self._inner.write_text(path, new_text, old_text)
        if outcome.applied:
            await self._store.add_file_change(
                self._session_id, self._message_id, str(path), old_text, new_text
            )
        return outcome

    async def delete(self, path: Path) -> EditOutcome:
        return await self._inner.delete(path)


def answer_taken(answer: Answer, ctx: AskContext) -> Decision | Literal["timeout", "cancelled"]:
    """The decision as the loop takes it, for askers' permission-resolved events: "always" where
    it was not offered (ctx.always is None) is "once" (CallContext.authorize tells the model)."""
    if answer.decision == "always" and ctx.always is None:
        return "once"
    return answer.decision
