"""`agentls acp`: the Agent Client Protocol (version 1) over stdin/stdout, on the same Agent as
the CLI and the language server.

One Agent per workspace root (a session's cwd), opened at the first session there; its sessions
are the ones this connection created or loaded. Bad params, an unknown session or a cwd that is
not a directory get a JSON-RPC error naming the field; nothing a client sends ends the server.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, RequestError, stdio_streams
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionModeState,
    SetSessionModeResponse,
    StopReason,
    UnstructuredCommandInput,
    Usage,
)
from acp.schema import SessionMode as AcpSessionMode

from agentls import __version__
from agentls.acp.config_trust import ask_pending
from agentls.acp.folders import add_folders, checked_directories
from agentls.acp.permissions import PermissionAsker, client_asks_before_writes
from agentls.acp.prompt import prompt_of
from agentls.acp.questions import form_elicitation
from agentls.acp.transport import StdioTransport
from agentls.acp.updates import EventRelay, UpdateSender, agent_text, plan_update, replay
from agentls.acp.workspace import AcpWorkspace
from agentls.config import Settings, load_settings
from agentls.session import Agent, CommandError, StoreError, TurnResult
from agentls.session.modes import MODES

log = logging.getLogger(__name__)

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "cancelled": "cancelled",
    "max_steps": "max_turn_requests",
    "doom_loop": "max_turn_requests",
    "tool_use": "end_turn",
}
LIST_LIMIT = 200
# The stdin reader's buffer (a line may be longer: it is read in pieces, see transport.py).
STDIO_LIMIT = 1024 * 1024


def _invalid(field: str, message: str) -> RequestError:
    return RequestError.invalid_params({"field": field, "message": message})


def _failed(message: str) -> RequestError:
    """-32603 with the reason as its message (what an editor shows)."""
    return RequestError(-32603, message, {"message": message})


class AcpServer:
    """The agent side of one ACP connection (acp.interfaces.Agent)."""

    def __init__(self) -> None:
        self.client: Any = None
        self.client_caps = ClientCapabilities()
        self.client_name: str | None = None  # the initialize's clientInfo.name
        self.sender = UpdateSender(self._send)
        self.asker = PermissionAsker(self.sessions_agent, self.sender.flush)
        self._agents: dict[Path, Agent] = {}
        self._sessions: dict[str, Agent] = {}
        self._lock = asyncio.Lock()
        # What an untrusted workspace config had ignored (by root), said once in each session.
        self._notices: dict[Path, str] = {}
        self._told: set[str] = set()
        # The workspace config contents (file, sha256) asked about in this connection.
        self._config_asked: set[tuple[str, str]] = set()
        # The command names last sent to each session (available_commands_update).
        self._commands: dict[str, list[str]] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn
        self.asker.client = conn

    async def _send(self, session_id: str, update: Any) -> None:
        await self.client.session_update(session_id=session_id, update=update)

    def sessions_agent(self, session_id: str) -> Agent | None:
        return self._sessions.get(session_id)

    # ---- agents, one per workspace root -------------------------------------------------

    async def agent_for(self, cwd: str) -> Agent:
        if not os.path.isabs(cwd):
            raise _invalid("cwd", f"must be an absolute path (got {cwd!r})")
        root = Path(os.path.realpath(cwd))
        if not root.is_dir():
            raise _invalid("cwd", f"{cwd} is not a directory")
        async with self._lock:
            agent = self._agents.get(root)
            if agent is None:
                agent = await self._open(root)
                self._agents[root] = agent
        return agent

    def _settings(self, root: Path) -> Settings:
        try:
            # Review "after" needs agent/listReview and agent/review, which ACP has not: an ACP
            # client is asked before each edit whatever the user's config says.
            settings = load_settings(root, {"review": "before"})
        except ValueError as exc:
            raise _failed(f"agentls: bad configuration: {exc}") from None
        if settings.untrusted_notice:
            log.warning("%s", settings.untrusted_notice)
            self._notices[root] = settings.untrusted_notice
        else:
            self._notices.pop(root, None)
        return settings

    async def _open(self, root: Path) -> Agent:
        settings = self._settings(root)
        agent: Agent | None = None
        fs = self.client_caps.fs
        files: AcpWorkspace | None = None
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            files = AcpWorkspace(
                root,
                self.client,
                reads=bool(fs.read_text_file),
                # A client that asks again before each write is not sent the approved edit.
                writes=bool(fs.write_text_file) and not client_asks_before_writes(self.client_name),
                settings=lambda: agent.settings if agent is not None else settings,
            )
        try:
            agent = await Agent.open(
                settings=settings,
                root=root,
                files=files,
                presenter=self.asker.presenter(),
                front_end="acp",
            )
        except StoreError as exc:
            raise _failed(f"agentls: {exc.message}") from None
        agent.subscribe(EventRelay(agent.root, self.sender, lambda: self._window(agent)))
        return agent

    def _add_folders(self, agent: Agent, directories: list[Path]) -> None:
        """additionalDirectories as workspace folders (acp/folders.py); what their untrusted
        configs had ignored is said with the cwd's."""
        notices = add_folders(agent, directories, {"review": "before"})
        if notices:
            told = self._notices.get(agent.root)
            self._notices[agent.root] = "\n".join([*([told] if told else []), *notices])

    @staticmethod
    def _window(agent: Agent | None) -> int:
        assert agent is not None
        return agent.context_window(agent.settings.model)

    def _session(self, session_id: str) -> Agent:
        agent = self._sessions.get(session_id)
        if agent is None:
            raise _invalid(
                "sessionId",
                f"unknown session {session_id!r} (session/new or session/load it first)",
            )
        return agent

    async def aclose(self) -> None:
        await self.sender.aclose()
        # Together: each stops its own MCP and language servers, which takes a moment.
        agents, self._agents = list(self._agents.values()), {}
        await asyncio.gather(*(agent.aclose() for agent in agents), return_exceptions=True)

    # ---- methods ------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_caps = client_capabilities or ClientCapabilities()
        self.client_name = client_info.name if client_info is not None else None
        self.asker.elicits_form = form_elicitation(self.client_caps)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
            ),
            agent_info=Implementation(name="agentls", title="agentls", version=__version__),
            auth_methods=[],
        )

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        more = checked_directories(additional_directories)  # more workspace folders
        agent = await self.agent_for(cwd)
        # The workspace's config files are checked again at each new session: one changed since
        # (by a session, say) is asked about before the session's first turn, never applied.
        agent.update_settings(self._settings(agent.root))
        self._add_folders(agent, more)
        _add_mcp_servers(agent, mcp_servers)
        record = await agent.new_session()
        self._sessions[record.id] = agent
        self._send_commands(record.id, agent)
        return NewSessionResponse(session_id=record.id, modes=modes(record.mode))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        more = checked_directories(additional_directories)
        agent = await self.agent_for(cwd)
        self._add_folders(agent, more)
        try:
            messages = await agent.messages(session_id)
        except KeyError:
            raise _invalid("sessionId", f"unknown session {session_id!r}") from None
        _add_mcp_servers(agent, mcp_servers)
        self._sessions[session_id] = agent
        for update in replay(agent.root, messages):
            self.sender.put(session_id, update)
        state = await agent.session(session_id)
        if state.todos:
            self.sender.put(session_id, plan_update(state.todos))
        self._send_commands(session_id, agent)
        await self.sender.flush()
        return LoadSessionResponse(modes=modes(state.record.mode))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        if cwd is not None and not os.path.isabs(cwd):
            raise _invalid("cwd", f"must be an absolute path (got {cwd!r})")
        # Every workspace's sessions are in the one store: any Agent lists them.
        known = next(iter(self._agents.values()), None)
        agent = known or await self.agent_for(cwd or os.getcwd())
        records = await agent.list_sessions(limit=LIST_LIMIT, cwd=cwd)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=r.id,
                    cwd=r.cwd,
                    title=r.title,
                    updated_at=datetime.fromtimestamp(r.updated_at / 1000, UTC).isoformat(),
                )
                for r in records
                if r.parent_id is None  # a sub-agent's session is its task call's
            ]
        )

    def _send_commands(self, session_id: str, agent: Agent) -> None:
        """The session's /commands, when they are not what the client was last sent."""
        update = available_commands(agent)
        names = [c.name for c in update.available_commands]
        if names != self._commands.get(session_id):
            self._commands[session_id] = names
            self.sender.put(session_id, update)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        agent = self._session(session_id)
        text, context = prompt_of(prompt)
        await self.sender.flush()  # what the session showed so far, before the question
        if await ask_pending(
            self.client, session_id, agent.settings, self._config_asked, self._send
        ):
            agent.update_settings(self._settings(agent.root))
        notice = self._notices.get(agent.root)
        if notice is not None and session_id not in self._told:
            self._told.add(session_id)
            self.sender.put(session_id, agent_text(f"{notice}\n\n"))
        try:
            result = await agent.prompt(session_id, text, context)
            if result.message_id is None and result.text:  # a built-in command's outcome
                self.sender.put(session_id, agent_text(result.text))
        except CommandError as exc:  # "/NAME": unknown, a refused @path: nothing was sent
            raise _invalid("prompt", str(exc)) from None
        finally:
            # An MCP server started this turn brings its prompts (/mcp__<server>__<prompt>).
            self._send_commands(session_id, agent)
            await self.sender.flush()  # every update of the turn before its answer
        return _response(result)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        agent = self._session(session_id)
        if mode_id not in MODES:
            raise _invalid("modeId", f"must be one of {', '.join(MODES)} (got {mode_id!r})")
        await agent.set_mode(session_id, "plan" if mode_id == "plan" else "build")
        return SetSessionModeResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        agent = self._sessions.get(session_id)
        if agent is not None:
            await agent.cancel(session_id)


def available_commands(agent: Agent) -> AvailableCommandsUpdate:
    """The /commands a prompt runs (the editor offers them as slash commands)."""
    hint = AvailableCommandInput(root=UnstructuredCommandInput(hint="arguments"))
    return AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            AvailableCommand(
                name=c.name,
                description=f"{c.description} (as {c.agent})" if c.agent else c.description,
                input=hint,
            )
            for c in agent.list_commands().values()
        ],
    )


def modes(current: str) -> SessionModeState:
    """The session's modes: build (the default) and plan (nothing may change until the user
    approves the plan the agent presents)."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            AcpSessionMode(id="build", name="Build", description="The agent works as usual."),
            AcpSessionMode(
                id="plan",
                name="Plan",
                description="Read-only: the agent plans and asks you to approve the plan "
                "before it changes anything.",
            ),
        ],
    )


def _add_mcp_servers(agent: Agent, servers: list[Any] | None) -> None:
    """The session's MCP servers (stdio, or http: see initialize) for the workspace's Agent,
    started at its next turn; a server that fails is said then, and the session goes on."""
    raw = []
    for index, server in enumerate(servers or []):
        entry = server.model_dump(mode="json", by_alias=True, exclude_none=True)
        if entry.get("type", "stdio") not in ("stdio", "http"):
            raise _invalid(f"mcpServers[{index}].type", f"{entry['type']} is not supported")
        raw.append(entry)
    if raw:
        try:
            agent.add_mcp_servers(raw)
        except ValueError as exc:
            raise _invalid("mcpServers", str(exc)) from None


def _response(result: TurnResult) -> PromptResponse:
    if result.finish_reason == "error":
        failure = result.failure
        if failure is None:  # a store fault: its message is for a person already
            raise _failed(result.error or "the turn failed")
        # The sentence and the next step as the message (what an editor shows); the rest as data.
        message = f"{failure.message} {failure.next_step}"
        error = _failed(message)
        error.data = {
            "message": message,
            "kind": failure.kind,
            "retryable": failure.retryable,
            "details": failure.details,
        }
        raise error
    usage = result.usage
    return PromptResponse(
        stop_reason=STOP_REASONS.get(result.finish_reason, "end_turn"),
        usage=Usage(
            total_tokens=usage.input_tokens
            + usage.output_tokens
            + usage.cache_read_tokens
            + usage.cache_write_tokens,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_read_tokens=usage.cache_read_tokens,
            cached_write_tokens=usage.cache_write_tokens,
        ),
    )


async def _main() -> None:
    server = AcpServer()
    reader, writer = await stdio_streams(limit=STDIO_LIMIT)
    # Only the methods above: the SDK answers every other one "method not found".
    conn = AgentSideConnection(cast(Any, server), StdioTransport(reader, writer), listening=False)
    try:
        await conn.listen()
    finally:
        await server.aclose()
        await asyncio.shield(conn.close())


def serve() -> int:
    """Speak ACP on stdin/stdout until the client closes stdin."""
    logging.basicConfig(level=os.environ.get("AGENTLS_LOG", "WARNING"), stream=sys.stderr)
    asyncio.run(_main())
    return 0
