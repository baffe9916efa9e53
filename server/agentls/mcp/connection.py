"""One MCP server: started, listed, called, restarted and stopped.

The connection lives in a task of its own (the SDK's transports and session are context managers
that must be left in the task that entered them); calls come from the turns' tasks. A stdio server
runs under bash's supervisor (tools/support/supervise.py): a child subreaper that ends every process the
server starts, when the server exits, when agentls stops it, and when agentls dies, killed
included (its parent-death signal). The server's stderr goes to a file whose last lines say why it
failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import sys
import tempfile
from collections.abc import Callable
from typing import IO, Any, Literal

import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from agentls.mcp.config import HttpServer, ServerConfig, StdioServer
from agentls.tools.bash import SUPERVISOR

log = logging.getLogger(__name__)

Status = Literal["stopped", "starting", "running", "failed"]
# Called with one line for each progress notification of a call.
Progress = Callable[[str], None]
# How many lines of the server's stderr an error shows, and how much of the file is read for them.
STDERR_LINES = 10
_STDERR_TAIL_BYTES = 16 * 1024
# How long a tools/call may take.
CALL_TIMEOUT_S = 600.0
# How long a stop may take (the SDK: stdin closed, 2 s, SIGTERM, 2 s, SIGKILL).
STOP_TIMEOUT_S = 10.0
PING_TIMEOUT_S = 5.0
CLIENT_INFO = types.Implementation(name="agentls", version="0.1.0")
# sh runs the supervisor with its report going nowhere (fd 3 -> /dev/null); the supervisor runs
# the server's command with the server's stdin, stdout and stderr.
_LAUNCH = 'py=$1 sup=$2; shift 2; exec "$py" -I -S "$sup" 3 -- "$@" 3>/dev/null'


class ServerFailed(Exception):
    """The server could not start, or stopped; the message names it and ends with its stderr's
    last lines."""


class _StartError(Exception):
    """What went wrong while starting (the message is made once the server has stopped)."""


class Connection:
    """A server's state, its tools, and the way to call them."""

    def __init__(self, config: ServerConfig, on_change: Callable[[], None] | None = None) -> None:
        self.config = config
        self.status: Status = "stopped"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.server_name: str | None = None
        # What the server said it offers besides tools (initialize), and its prompts (listed at
        # the start: they are offered as slash commands, which are listed without waiting).
        self.has_resources = False
        self.prompts: list[types.Prompt] = []
        # Set when the server said its tool list changed: listed again before the next step.
        self.tools_changed = False
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._stderr: IO[str] | None = None
        self._scope: Any = None  # the running task's anyio.CancelScope
        self._starting = asyncio.Lock()

    @property
    def name(self) -> str:
        return self.config.name

    # ---- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the server and list its tools, within its start timeout; raises ServerFailed.
        Two callers at once (two sessions' turns) share one start."""
        async with self._starting:
            if self.status == "running":
                return
            await self._start()

    async def _start(self) -> None:
        await self.stop()
        self.status, self.error = "starting", None
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A turn cancelled while waiting leaves `ready` to no one: its failure is fetched here
        # (it is said as the server's status), never printed as "Future exception was never
        # retrieved" with a traceback.
        ready.add_done_callback(_fetch)
        self._task = asyncio.create_task(self._run(ready), name=f"mcp server {self.name}")
        try:
            # A cancelled turn stops waiting; the start goes on (or fails) in its own task.
            await asyncio.shield(ready)
        except ServerFailed as exc:
            self.status, self.error = "failed", str(exc)
            await self._finish()
            raise
        self.status = "running"

    async def _run(self, ready: asyncio.Future[None]) -> None:
        import anyio

        config = self.config
        # One scope around the whole life (anyio's scopes end in the order they began): its
        # deadline is the start timeout until the server is up, none after; stop() cancels it
        # when the server does not stop by itself.
        self._scope = scope = anyio.CancelScope(
            deadline=anyio.current_time() + config.start_timeout_s
        )
        try:
            with scope:
                async with contextlib.AsyncExitStack() as stack:
                    try:
                        read, write = await stack.enter_async_context(self._transport())
                        session = await stack.enter_async_context(
                            ClientSession(
                                read,
                                write,
                                message_handler=self._on_message,
                                client_info=CLIENT_INFO,
                            )
                        )
                        init = await session.initialize()
                        self.tools = await self._list(session)
                        self.has_resources = init.capabilities.resources is not None
                        self.prompts = (
                            await self._prompts(session) if init.capabilities.prompts else []
                        )
                    except Exception as exc:  # the SDK's and the transport's errors, as they come
                        # Said once the transport is closed: the server's stderr is complete.
                        raise _StartError(f"failed to start: {_describe(exc)}") from exc
                    scope.deadline = math.inf
                    self.server_name = init.server_info.name if init.server_info else None
                    self._session = session
                    ready.set_result(None)
                    await self._stop.wait()
            if scope.cancelled_caught and not ready.done():
                raise _StartError(
                    f"did not start within {config.start_timeout_s:g} s "
                    '(its "timeout", in milliseconds, sets how long it may take)'
                )
        except BaseException as exc:  # noqa: BLE001 - the task's end, whatever ended it
            leaf = _leaf(exc)  # a task group's error comes in a group
            if isinstance(leaf, _StartError):
                what = str(leaf)
            elif not ready.done():
                what = f"failed to start: {_describe(exc)}"
            else:
                what = f"stopped: {_describe(exc)}"
            if not ready.done():
                ready.set_exception(ServerFailed(self._failure(what)))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._session = None
            if not ready.done():
                ready.set_exception(ServerFailed(self._failure("stopped while starting")))

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        config = self.config
        if isinstance(config, HttpServer):
            import httpx2

            client = httpx2.AsyncClient(
                headers=dict(config.headers),
                timeout=httpx2.Timeout(30.0, read=CALL_TIMEOUT_S),
            )
            return _with_client(client, config.url)
        assert isinstance(config, StdioServer)
        if config.cwd and not os.path.isdir(config.cwd):
            raise OSError(f"its cwd {config.cwd} is not a directory")
        self._close_stderr()
        self._stderr = tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace")
        params = StdioServerParameters(
            command="/bin/sh",
            args=["-c", _LAUNCH, "sh", sys.executable, SUPERVISOR, config.command, *config.args],
            env=dict(config.env) or None,
            cwd=config.cwd,
            encoding_error_handler="replace",
        )
        return stdio_client(params, errlog=self._stderr)

    async def stop(self) -> None:
        """Stop the server (and everything it started); waits at most STOP_TIMEOUT_S."""
        task = self._task
        self._stop.set()
        if task is not None and not task.done():
            if self.status == "starting" and self._scope is not None:
                self._scope.cancel()  # a start left waiting (its turn was cancelled): no wait
            done, _ = await asyncio.wait([task], timeout=STOP_TIMEOUT_S)
            if not done and self._scope is not None:
                self._scope.cancel()
                done, _ = await asyncio.wait([task], timeout=STOP_TIMEOUT_S)
            if not done:
                task.cancel()
                await asyncio.wait([task], timeout=STOP_TIMEOUT_S)
        await self._finish()
        if self.status in ("running", "starting"):
            self.status = "stopped"

    async def _finish(self) -> None:
        task, self._task = self._task, None
        if task is not None and task.done() and not task.cancelled():
            task.exception()  # fetched: an error already reported
        self._session = None
        self._close_stderr()

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()
            self._stderr = None

    # ---- use ------------------------------------------------------------------------------

    async def alive(self) -> bool:
        """Whether the server still answers (a ping); False marks it failed."""
        session = self._session
        if self.status != "running" or session is None or self._task is None:
            return False
        if self._task.done():
            self._mark_failed("stopped")
            return False
        try:
            await asyncio.wait_for(session.send_ping(), PING_TIMEOUT_S)
        except Exception as exc:  # the SDK's and the transport's errors, as they come
            self._mark_failed(f"stopped answering: {_describe(exc)}")
            return False
        return True

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: Progress | None = None
    ) -> types.CallToolResult:
        """tools/call; raises ServerFailed when the server is gone (or goes during the call), and
        MCPError for the server's own error answer. With `progress`, the request carries a
        progress token (the SDK's `_meta.progressToken`) and each `notifications/progress` the
        server sends for it is given to `progress` as one line."""
        session = self._session
        if self.status != "running" or session is None:
            raise ServerFailed(self.error or f"MCP server {self.name!r} is not running")
        on_progress = None
        if progress is not None:
            report = progress

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                report(progress_line(progress, total, message))

        try:
            return await session.call_tool(
                tool, arguments, read_timeout_seconds=CALL_TIMEOUT_S, progress_callback=on_progress
            )
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                self._mark_failed("stopped during the call")
                raise ServerFailed(self.error or "") from exc
            raise

    async def refresh_tools(self) -> bool:
        """List the tools again when the server said they changed; whether they were."""
        session = self._session
        if not self.tools_changed or session is None:
            return False
        self.tools_changed = False
        try:
            self.tools = await asyncio.wait_for(self._list(session), PING_TIMEOUT_S * 6)
        except Exception as exc:  # the SDK's and the transport's errors, as they come
            log.warning("MCP server %s: tools/list failed: %s", self.name, _describe(exc))
            return False
        return True

    async def _list(self, session: ClientSession) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # pages; a server that never stops paging is cut off
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _prompts(self, session: ClientSession) -> list[types.Prompt]:
        prompts: list[types.Prompt] = []
        cursor: str | None = None
        for _ in range(100):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_prompts(params=params)
            prompts.extend(page.prompts)
            cursor = page.next_cursor
            if not cursor:
                break
        return prompts

    def _running(self) -> ClientSession:
        session = self._session
        if self.status != "running" or session is None:
            raise ServerFailed(self.error or f"MCP server {self.name!r} is not running")
        return session

    async def resources(self) -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
        """resources/list and resources/templates/list (a server without templates: none)."""
        session = self._running()
        found: list[types.Resource] = []
        cursor: str | None = None
        for _ in range(100):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await asyncio.wait_for(session.list_resources(params=params), CALL_TIMEOUT_S)
            found.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                break
        try:
            templates = (await session.list_resource_templates()).resource_templates
        except MCPError:
            templates = []
        return found, templates

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """resources/read."""
        session = self._running()
        return await asyncio.wait_for(session.read_resource(uri), CALL_TIMEOUT_S)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        """prompts/get."""
        session = self._running()
        return await asyncio.wait_for(session.get_prompt(name, arguments), CALL_TIMEOUT_S)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed = True
            if self._on_change is not None:
                self._on_change()

    # ---- errors ---------------------------------------------------------------------------

    def _mark_failed(self, what: str) -> None:
        self.status = "failed"
        self.error = self._failure(what)
        self._session = None
        self._stop.set()

    def _failure(self, what: str) -> str:
        message = f"MCP server {self.name!r} ({self.config.describe()}) {what}"
        tail = self.stderr_tail()
        if tail:
            message += "\nIts stderr ended with:\n" + "\n".join(f"  {line}" for line in tail)
        return message

    def stderr_tail(self, lines: int = STDERR_LINES) -> list[str]:
        """The last lines the server wrote to its stderr."""
        handle = self._stderr
        if handle is None:
            return []
        try:
            fd = handle.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - _STDERR_TAIL_BYTES)
            data = os.pread(fd, size - start, start)
        except (OSError, ValueError):
            return []
        text = data.decode("utf-8", "replace")
        kept = [line.rstrip() for line in text.splitlines() if line.strip()]
        return [line[:300] for line in kept[-lines:]]


@contextlib.asynccontextmanager
async def _with_client(client: Any, url: str) -> Any:
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


def progress_line(done: float, total: float | None, message: str | None) -> str:
    """A progress notification as one line: "3/10: message", "40%", "message"."""
    number = f"{done:g}/{total:g}" if total else (f"{done:g}" if done else "")
    return ": ".join(p for p in (number, (message or "").strip()[:200]) if p) or "working"


def _fetch(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()


def _leaf(exc: BaseException) -> BaseException:
    """A group's first leaf (the exception itself when it is none)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    """An exception in one line: its group's first leaf, its type when it says nothing."""
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        return exc.error.message
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
