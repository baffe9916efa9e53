"""`agentls acp` as a separate process, driven by the SDK's client side (spawn_agent_process) with
a scripted client: it answers permission questions from a script, holds an in-memory filesystem
(the editor's buffers) and records every session/update."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from messages_api import MessagesAPIServer

# A permission answer: an option id, optionally with feedback (sent in the response's _meta).
Answer = str | tuple[str, str]

# How long a test waits for `agentls acp` on a loaded 2-core machine (CI runs the whole suite in
# two workers there). Measured with three of these tests at once and two CPU-bound processes
# beside them (load 14): the start (Python and ~270 pydantic models of the ACP SDK's schema
# built) took 11-12 s to answer initialize, a two-request turn 15-17 s, the exit 4-5 s, the test
# 50 s; the bounds of 30 s, 60 s, 20 s and pytest's 120 s were within a factor of 2 to 4 of that.
# These are only bounds of waits that end as soon as the answer comes.
START_S = 180.0  # initialize answered
TURN_S = 240.0  # session/prompt answered
EXIT_S = 120.0  # the process ended by itself after stdin closed (then it is terminated)
TEST_S = 600.0  # pytest-timeout for each test in tests/acp (spawning, turns and exits)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in tests/acp gets TEST_S (unless it sets its own timeout)."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_S))


@dataclass
class ScriptedClient:
    """An ACP client: the editor's buffers in `files` (path -> text), permission answers taken
    in order from `answers` ("cancelled" when none is left), every update in `updates`."""

    files: dict[str, str] | None = None
    answers: list[Answer] = field(default_factory=list)
    updates: list[tuple[str, Any]] = field(default_factory=list)
    questions: list[tuple[ToolCallUpdate, list[str]]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        # The call was shown before its question.
        shown = {u.tool_call_id for _, u in self.updates if u.session_update == "tool_call"}
        assert tool_call.tool_call_id in shown
        self.questions.append((tool_call, [o.option_id for o in options]))
        if self.answers and self.answers[0] == "wait":
            # The user looks at the question until the prompt is cancelled (then the client
            # answers "cancelled", as ACP asks of it).
            self.answers.pop(0)
            await self.cancelled.wait()
        if not self.answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        answer = self.answers.pop(0)
        option, feedback = answer if isinstance(answer, tuple) else (answer, None)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option),
            field_meta={"feedback": feedback} if feedback else None,
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        assert self.files is not None, "read_text_file from a client without fs"
        self.reads.append(path)
        if path not in self.files:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.files[path])

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        assert self.files is not None, "write_text_file from a client without fs"
        self.writes.append((path, content))
        self.files[path] = content
        return WriteTextFileResponse()

    def of(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [
            u
            for sid, u in self.updates
            if u.session_update == kind and (session_id is None or sid == session_id)
        ]

    def text(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk", session_id))


@dataclass
class Connection:
    conn: Any
    client: ScriptedClient
    init: Any
    root: Path

    async def request(self, method: str, params: Any) -> Any:
        """A raw JSON-RPC request (bad input the typed client would not send)."""
        return await self.conn._conn.send_request(method, params)


@dataclass
class AcpEnv:
    api: MessagesAPIServer
    env: dict[str, str]
    root: Path
    logs: Path


@pytest.fixture(scope="module")
def acp_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AcpEnv]:
    base = tmp_path_factory.mktemp("acp")
    root = base / "ws"
    root.mkdir()
    with MessagesAPIServer() as api:
        env = {
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "test-key",
            "AGENTLS_DATA_DIR": str(base / "data"),
            "AGENTLS_MODEL": "claude-sonnet-5-5",
            "XDG_CONFIG_HOME": str(base / "config"),
            "CLAUDE_CONFIG_DIR": str(base / "claude"),  # not the developer's ~/.claude
        }
        yield AcpEnv(api=api, env=env, root=root.resolve(), logs=base)


@asynccontextmanager
async def connect(
    acp_env: AcpEnv, client: ScriptedClient, *, fs: bool = True, elicitation: bool = False
) -> AsyncIterator[Connection]:
    """One `agentls acp` process, initialized; its stderr goes to a file under the env's dir."""
    log_path = acp_env.logs / f"acp-{os.getpid()}-{len(list(acp_env.logs.glob('acp-*')))}.log"
    with open(log_path, "wb") as log:
        async with spawn_agent_process(
            cast(Any, client),
            sys.executable,
            "-m",
            "agentls.cli.main",
            "acp",
            env=acp_env.env,
            cwd=acp_env.root,
            # Stopping takes a moment with MCP and language servers to stop: it must end by
            # itself (exit code 0), not be killed.
            transport_kwargs={"stderr": log.fileno(), "shutdown_timeout": EXIT_S},
            # elicitation/create is "unstable" in this SDK's client: served only when enabled.
            use_unstable_protocol=elicitation,
        ) as (conn, process):
            caps = ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=False
            )
            if elicitation:  # form elicitation (elicitation/create); the client answers it
                caps.elicitation = ElicitationCapabilities(form=ElicitationFormCapabilities())
            init = await asyncio.wait_for(
                conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps),
                START_S,
            )
            yield Connection(conn=conn, client=client, init=init, root=acp_env.root)
        assert process.returncode == 0, log_path.read_text()


async def wait_until(check: Callable[[], bool], timeout: float = TURN_S) -> None:
    async def poll() -> None:
        while not check():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)
