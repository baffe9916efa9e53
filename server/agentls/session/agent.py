"""The Agent: the one face every front end sees (sessions, prompts, cancel, questions, revert,
settings), and the sessions it keeps loaded.

One `Agent` serves one workspace. Each session keeps its history in memory between turns
(loaded from the store once; the least recently used idle ones beyond keep_idle_sessions are
dropped), queues prompts first-in first-out, and runs each turn (turn.py) in its own task so a
cancel reaches the stream and every running tool. A turn of a session runs in one process at a
time: it takes the session's lock in the store first.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.config import Settings
from agentls.config_home import config_home
from agentls.events import SessionMode, TodoItem
from agentls.history import ApiHistory, Attachment, Message, Usage, clean_text, new_id
from agentls.language.headless import use_launcher
from agentls.model import listing
from agentls.model.base import Provider
from agentls.model.catalog import model_info, use_providers
from agentls.permission.broker import Answer, ApprovalBroker
from agentls.session.commands import (
    Command,
    CommandError,
    Expansion,
    agent_commands,
    parse_invocation,
    run_command,
)
from agentls.session.context_items import PromptItems
from agentls.session.heap import HEAP
from agentls.session.instructions import Instructions
from agentls.session.manage import SessionManagement
from agentls.session.mcp_servers import AgentMcp
from agentls.session.modes import MODES, set_mode
from agentls.session.policy import Policy, stored_rule
from agentls.session.questions import AskContext, Asker, QuestionPresenter, ask_through_broker
from agentls.session.retry import TurnRetry
from agentls.session.revert import (
    RevertOutcome,
    UnrevertOutcome,
    held_idle,
    revert_messages,
    unrevert_messages,
)
from agentls.session.review import SessionReview
from agentls.session.state import SessionState, Steer, Ticket, TurnResult
from agentls.session.subagents import SubAgents
from agentls.session.system_prompt import FrontEnd, PromptKind
from agentls.session.turn import Turn, TurnParts, uncancel
from agentls.session.turn_setup import command_parts, command_text, take_turn_lock
from agentls.store import ProjectGrant, SessionRecord, Store, StoreError, default_db_path
from agentls.tools.registry import ToolRegistry, default_tools
from agentls.tools.support.sandbox import language_server_prefix
from agentls.verify.workspace import VerifiedWorkspace
from agentls.workspace.protocol import FileAccess

if TYPE_CHECKING:
    from agentls.mcp.manager import ServerStatus

log = logging.getLogger(__name__)

EventSink = Callable[[Any], None]

# How many idle sessions an Agent keeps loaded (their history, its API form, what the model read);
# the least recently used beyond them are dropped from memory: a long-running server would
# otherwise keep every session it ever opened (tens of MB for a long one). A dropped session is
# loaded again from the store when next used; what it loses is the record of which files the
# model has read, as after a restart.
KEEP_IDLE_SESSIONS = 8


def make_provider(model: str, settings: Settings) -> Provider:
    from agentls.model.factory import ProviderOptions, create_provider

    options = ProviderOptions(
        max_attempts=settings.api_max_attempts,
        base_delay_s=settings.api_retry_base_delay_s,
        max_delay_s=settings.api_max_retry_delay_s,
        timeout_s=settings.api_timeout_s,
        prompt_caching=settings.prompt_caching,
    )
    return create_provider(model, settings.providers or {}, options)


class Agent(SessionManagement, SessionReview, TurnRetry, PromptItems):
    """The agent core for one workspace: sessions, the loop, tools, permissions, persistence."""

    def __init__(
        self,
        *,
        store: Store,
        workspace: VerifiedWorkspace,
        settings: Settings,
        registry: ToolRegistry | None = None,
        asker: Asker | None = None,
        presenter: QuestionPresenter | None = None,
        provider_factory: Callable[[str, Settings], Provider] = make_provider,
        watch_instructions: bool = True,
        keep_idle_sessions: int = KEEP_IDLE_SESSIONS,
        mcp_servers: dict[str, Any] | None = None,
        front_end: FrontEnd = "terminal",  # whom the system prompt is written for
    ) -> None:
        self.store = store
        self.prompt_kind = PromptKind(front_end=front_end)
        self.workspace = workspace
        self.root = Path(os.path.realpath(workspace.root))
        self.policy = Policy(settings, str(self.root))
        use_providers(settings.providers)  # the model table knows the configured models
        use_launcher(language_server_prefix)  # headless language servers run in the sandbox
        self.registry = registry or ToolRegistry(default_tools())
        self.broker = ApprovalBroker(timeout_s=settings.approval_timeout_s)
        self.asker: Asker = asker or self.ask
        # How the front end shows a question (see questions.py); None: only the events say it.
        self.presenter = presenter
        # Whether aclose() closes the store too (an agent from Agent.open).
        self._owns_store = False
        self._provider_factory = provider_factory
        self._providers: dict[str, Provider] = {}
        # Made from an earlier `providers` setting: a turn running on one keeps it; closed at aclose.
        self._retired_providers: list[Provider] = []
        # Least recently used first (see KEEP_IDLE_SESSIONS).
        self._sessions: OrderedDict[str, SessionState] = OrderedDict()
        self.keep_idle_sessions = max(1, keep_idle_sessions)
        # Prompts waiting for their session to load (not in its queue yet), and how many cancels
        # each session had while some were: a cancel then ends those prompts too.
        self._prompts_loading: dict[str, int] = {}
        self._cancels: dict[str, int] = {}
        self._sinks: list[EventSink] = []
        # Who holds a session's turn lock in the store (store/session_locks.py): this agent.
        self.lock_owner = new_id("agent")
        # AGENTS.md / CLAUDE.md, watched from the first turn on (see instructions.py). A one-shot
        # `agentls run` does without the watcher: the stat check at each step sees every edit.
        self.instructions = Instructions(workspace, config_home(), watch=watch_instructions)
        # MCP servers: the settings' and those given here (e.g. by an ACP session/new).
        self.mcp = AgentMcp(self.root, lambda: self.settings.mcp_servers, mcp_servers)
        self.subagents = SubAgents(self._turn_parts, self._keep, self.registry, self.policy)

    @classmethod
    async def open(
        cls,
        *,
        settings: Settings,
        root: Path | str | None = None,
        files: FileAccess | None = None,
        db_path: Path | str | None = None,
        **options: Any,
    ) -> Agent:
        """An agent with its own store (at db_path, by default the user's database), closed by
        aclose(). Its workspace is the one edit pipeline (VerifiedWorkspace) on the front end's
        raw `files`, else the disk's under `root`. Raises StoreError when the store cannot be
        opened. `options` are the constructor's (asker, presenter, ...)."""
        agent: Agent | None = None

        def in_force() -> Settings:  # the agent's, once it is made
            return agent.settings if agent is not None else settings

        workspace = VerifiedWorkspace.on(files, root, in_force)
        store = await Store.open(default_db_path() if db_path is None else db_path)
        try:
            agent = cls(store=store, workspace=workspace, settings=settings, **options)
        except BaseException:
            await store.close()
            raise
        agent._owns_store = True
        return agent

    async def aclose(self) -> None:
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
        await self.end_hooks(states)  # SessionEnd (session/hooks.py)
        for provider in [*self._providers.values(), *self._retired_providers]:
            await provider.aclose()
        await self.mcp.aclose()
        await self.instructions.aclose()
        # The language servers agentls started for this workspace stop with it.
        try:
            await self.workspace.languages.aclose()
        except Exception:  # noqa: BLE001 - shutting down; the store still closes
            log.exception("stopping the language servers failed")
        if self._owns_store:
            await self.store.close()

    # ---- configuration and events -------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.policy.settings

    def update_settings(self, settings: Settings) -> None:
        """New settings (and the rules they make) count from the next tool call on."""
        if settings.providers != self.settings.providers:  # a new baseUrl, region, key...
            self.renew_providers()
        self.policy.update(settings)
        self.broker.timeout_s = settings.approval_timeout_s
        self.mcp.reconfigure()
        use_providers(settings.providers)

    def subscribe(self, sink: EventSink) -> Callable[[], None]:
        self._sinks.append(sink)
        return lambda: self._sinks.remove(sink)

    def emit(self, event: Any) -> None:
        for sink in list(self._sinks):
            try:
                sink(event)
            except Exception:  # a broken front end must not break the turn
                log.exception("event sink failed")

    def context_window(self, model: str) -> int:
        """The model's context window in tokens (the contextWindow setting wins when set)."""
        return self.settings.context_window or model_info(model).context_window

    def provider(self, model: str) -> Provider:
        if model not in self._providers:
            self._providers[model] = self._provider_factory(model, self.settings)
        return self._providers[model]

    # ---- sessions -----------------------------------------------------------------------

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

    def list_models(self) -> list[dict[str, Any]]:
        """The models `agentls models` lists, with prices and whether each one's key is set."""
        return listing.picker_rows(dict(self.settings.providers or {}))

    def check_model(self, model: str) -> None:
        """ValueError when `model` names a provider nobody configured."""
        listing.check_model(model, dict(self.settings.providers or {}))

    async def set_mode(self, session_id: str, mode: SessionMode) -> None:
        """The session's mode: "build" (default) or "plan" (nothing may change; see modes.py),
        kept in the store; it counts from the running turn's next tool call and step on."""
        if mode not in MODES:
            raise ValueError(f"mode must be build or plan (got {mode!r})")
        await set_mode(await self.session(session_id), self.store, self.emit, mode)
        for child in self._sessions.values():  # its running sub-agents follow (not stored)
            if child.record.parent_id == session_id and child.users > 0:
                child.record.mode = mode

    def list_commands(self) -> dict[str, Command]:
        """The /commands by name: built-ins, the user's, the trusted workspace's, MCP prompts."""
        return agent_commands(self)

    async def todos(self, session_id: str) -> list[TodoItem]:
        """The session's todo list (the todowrite tool's), as last written."""
        return list((await self.session(session_id)).todos)

    def is_busy(self, session_id: str) -> bool:
        state = self._sessions.get(session_id)
        return state is not None and (state.busy or bool(state.queue))

    async def session(self, session_id: str) -> SessionState:
        """The session in memory, loaded from the store if it is not; KeyError if unknown."""
        state = self._sessions.get(session_id)
        if state is not None:
            self._sessions.move_to_end(session_id)
            return state
        record = await self.store.get_session(session_id)
        if record is None:
            raise KeyError(f"unknown sessionId {session_id!r}")
        # The history is long-lived: no collection while it is built, frozen after it.
        with HEAP.collector_paused():
            messages = await self.store.load_messages(
                session_id, since_message_id=record.summary_message_id
            )
            grants = await self.store.list_grants(session_id)
            todos = await self.store.load_todos(session_id)
        state = SessionState(record=record, messages=messages, todos=todos)
        state.grants = [stored_rule(g.tool, g.pattern, g.action, g.exact) for g in grants]
        # Another task may have loaded it meanwhile; keep the first.
        state = self._sessions.setdefault(session_id, state)
        self._sessions.move_to_end(session_id)
        self._drop_idle_sessions(keep=state)
        return state

    def _keep(self, state: SessionState) -> None:
        """A session made elsewhere (a sub-agent's) kept like one loaded here."""
        self._sessions[state.record.id] = state
        self._drop_idle_sessions(keep=state)

    def _drop_idle_sessions(self, keep: SessionState) -> None:
        """Drop the least recently used idle sessions beyond keep_idle_sessions (keep, about to
        be used, counts as one of them and stays)."""
        idle = [sid for sid, state in self._sessions.items() if state is not keep and state.idle]
        for sid in idle[: max(0, len(idle) - (self.keep_idle_sessions - 1))]:
            # Its last turn's task may hold an exception whose traceback leads back to the state:
            # a cycle the collector would not free (the heap is frozen, see heap.py).
            self._sessions.pop(sid).task = None

    async def revert(
        self, session_id: str, message_id: str, scope: str = "both", dry_run: bool = False
    ) -> RevertOutcome:
        """Back to just before the user message `message_id` (revert.py): its files ("code"),
        its conversation, or both. KeyError, NotACheckpoint, SessionBusyError."""
        state = await self.session(session_id)
        async with held_idle(state, self.store, self.lock_owner):
            workspace = self.workspace.for_session(session_id)
            return await revert_messages(state, self.store, workspace, message_id, scope, dry_run)

    async def unrevert(self, session_id: str) -> UnrevertOutcome:
        """Redo the last revert (revert.py); NothingToRedo after a prompt sent since."""
        state = await self.session(session_id)
        async with held_idle(state, self.store, self.lock_owner):
            workspace = self.workspace.for_session(session_id)
            return await unrevert_messages(state, self.store, workspace)

    async def history(self, session_id: str) -> list[Message]:
        """Every stored message of the session (before a compaction too); KeyError if unknown."""
        await self.session(session_id)  # KeyError if unknown
        return await self.store.load_messages(session_id, repair=False)

    # ---- permissions --------------------------------------------------------------------

    async def ask(self, ctx: AskContext) -> Answer:
        """The one ask path of every front end (see questions.py): shown by self.presenter,
        answered through approve()."""
        return await ask_through_broker(ctx, self.broker, self.emit, self.presenter)

    def approve(
        self,
        session_id: str,
        request_id: str,
        decision: str,
        feedback: str | None = None,
        scope: str = "session",
        accepted: dict[Path, str] | None = None,
    ) -> None:
        """Answer a permission request; raises ApprovalError for unknown/answered/expired ones.
        `scope` says where an "always" is kept: the session, or the project (its root).
        `accepted` (with "once"): what the user accepted instead of a proposed change, each
        file's text (a proposed file not in it stays as it was)."""
        self.broker.answer(session_id, request_id, decision, feedback, scope, accepted)

    async def load_project_grants(self) -> None:
        """Read this root's project grants (given here, or by another agentls process since)."""
        await self.policy.load_project_grants(self.store)

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

    # ---- prompting ----------------------------------------------------------------------

    async def prompt(
        self,
        session_id: str,
        text: str,
        context: Sequence[Attachment] | None = None,
        mode: str = "queue",
    ) -> TurnResult:
        """Run one turn; a prompt to a busy session waits its turn (first in, first out). With
        mode "steer", a prompt to a session running a turn joins that turn at its next step
        boundary instead (steering.py) and returns the turn's result; one the turn did not take
        (it ended first) runs as a prompt of its own. A prompt "/NAME args" runs a command
        (commands.py; one run as an agent type or with `!` commands never steers: it queues);
        CommandError when it cannot."""
        command = None  # a custom command's model and agent type, for its turn
        invocation = parse_invocation(text)
        if invocation is not None:
            outcome = await run_command(self, session_id, *invocation)
            if not isinstance(outcome, Expansion):
                return outcome
            command, text, context = outcome, outcome.text, [*(context or []), *outcome.context]
        if not text.strip() and not context:  # nothing to send (front ends refuse it first)
            raise CommandError("a prompt needs text, or an image in its context")
        if mode == "steer" and (command is None or command.steers):
            steered = await self._steer(session_id, text, context or [])
            if steered is not None:
                return steered
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
        ticket = Ticket()
        state.queue.append(ticket)
        try:
            async with state.lock:
                if ticket.cancelled:
                    return TurnResult(session_id, None, "cancelled", "", Usage())
                state.queue.remove(ticket)
                # Before the turn's task and objects exist (see heap.py).
                HEAP.freeze()
                state.task = asyncio.create_task(
                    self._run_turn(state, text, context or [], command)
                )
                return await state.task
        finally:
            if ticket in state.queue:
                state.queue.remove(ticket)

    async def _steer(
        self, session_id: str, text: str, context: Sequence[Attachment]
    ) -> TurnResult | None:
        """The running turn's result once it took the steer (or was cancelled); None when no
        turn runs or it ended without taking it."""
        state = await self.session(session_id)
        task = state.task
        if task is None or task.done() or state.finishing:
            return None
        steer = Steer(text, list(context))
        state.steers.append(steer)
        state.users += 1  # loaded until its turn ends
        try:
            # Shielded: a steer's request cancelled leaves the turn running.
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            if steer in state.steers:
                state.steers.remove(steer)
            raise
        except Exception:
            if steer.taken:
                raise
            return None  # the turn failed before taking it: the steer runs on its own
        finally:
            state.users -= 1
        if steer in state.steers:
            state.steers.remove(steer)
        if steer.taken or result.finish_reason == "cancelled":
            return result
        return None

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

    # ---- MCP servers (session/mcp_servers.py) ------------------------------------------

    def add_mcp_servers(self, servers: dict[str, Any] | list[Any]) -> None:
        self.mcp.add(servers)

    async def mcp_status(self, start: bool = False) -> list[ServerStatus]:
        return await self.mcp.status(start)

    async def _prepare_tools(self, first: bool) -> list[str]:
        return await self.mcp.prepare_tools(self.registry, first)

    # ---- the turn -----------------------------------------------------------------------

    def _turn_parts(self, model: str, session_id: str | None = None) -> TurnParts:
        return TurnParts(
            store=self.store,
            provider=self.provider(model),
            registry=self.registry,
            policy=self.policy,
            emit=self.emit,
            ask=self.asker,
            workspace=self.workspace.for_session(session_id),  # its calls made for the session
            root=self.root,
            instructions=self.instructions,
            prepare_tools=self._prepare_tools,
            run_task=self.subagents.run,
            prompt=self.prompt_kind,
        )

    async def _run_turn(
        self,
        state: SessionState,
        text: str | None,  # None: retry the failed last turn (retry.py)
        context: Sequence[Attachment],
        command: Expansion | None = None,
    ) -> TurnResult:
        session_id = state.record.id
        # Before anything of this turn is stored (SessionLockedError: another process runs one).
        if not await take_turn_lock(self, state):
            return TurnResult(session_id, None, "cancelled", "", Usage())
        model = (command and command.model) or state.record.model  # a command's, for this turn
        parts = self._turn_parts(model, session_id)
        parts = command_parts(parts, state, command, self.subagents.registry_for)
        turn = Turn(parts, state, model)
        with HEAP.turn_running():  # no freezing meanwhile (see heap.py)
            try:
                try:
                    # Read at each turn, so a grant given or revoked by another process counts now.
                    await self.load_project_grants()
                    return await turn.run(await command_text(turn, command, text), context)
                except asyncio.CancelledError:
                    uncancel()
                    state.finishing = True
                    return await turn.finish_cancelled()
            except StoreError as exc:  # a full disk, ...: the turn ends with an error event
                return await turn.fail_on_store(exc)
            finally:
                turn.flush_deltas()  # nothing streamed stays unshown, whatever ended the turn
                await self._unlock(session_id)
                state.finishing = False

    async def _reload(self, state: SessionState) -> None:
        """Read the session's record and history again from the store (the turn lock held)."""
        record = await self.store.get_session(state.record.id)
        if record is None:
            raise KeyError(f"unknown sessionId {state.record.id!r}")
        with HEAP.collector_paused():
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
            uncancel()
            await asyncio.wait([unlock])
        except Exception:  # logged below
            pass
        if not unlock.cancelled() and unlock.exception() is not None:
            log.warning(
                "session %s: its turn lock was not released: %s", session_id, unlock.exception()
            )
