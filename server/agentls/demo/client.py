"""The demo's editor: a minimal LSP client that runs `agentls serve` and prints what happens.

It has no buffers. It declares `workspace.applyEdit` (with documentChanges and file creation) and
applies the server's workspace edits to the files on disk, declares agent approvals and answers
every permission request with `agent/approve` "once" (saying so), and prints the streamed
`agent/event` notifications as a transcript: text inline, one line per tool call, abbreviated
tool results, permission requests with their diff.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol import default_converter as pygls_default_converter
from pygls.uris import from_fs_path, to_fs_path

from agentls import __version__
from agentls.lsp.textedit import apply_text_edits

START_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
RESULT_LINES = 2  # first lines of a tool result shown in the transcript (and its last)


class DemoError(Exception):
    """The server misbehaved or went away; the message says how."""


def _converter() -> Any:
    """pygls' converter, except that agent/* messages keep their params and results as plain
    JSON objects (pygls would make namedtuples of them)."""
    converter = pygls_default_converter()  # type: ignore[no-untyped-call]

    def keep(obj: dict[str, Any], cls: type) -> Any:
        return cls(**obj)

    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, keep)
    return converter


def _indent(text: str, prefix: str = "    ") -> str:
    return "".join(prefix + line for line in text.splitlines(keepends=True))


@dataclass
class Transcript:
    """Renders agent/event notifications for a person reading a terminal."""

    out: TextIO
    at_line_start: bool = True
    _titles: dict[str, str] = field(default_factory=dict)

    def line(self, text: str) -> None:
        """A line of its own, after any text being streamed."""
        if not self.at_line_start:
            self.out.write("\n")
        self.out.write(text + "\n")
        self.at_line_start = True
        self.out.flush()

    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "text-delta":
            delta = str(event.get("delta", ""))
            self.out.write(delta)
            if delta:
                self.at_line_start = delta.endswith("\n")
            self.out.flush()
        elif kind == "turn-start":
            self.line(f"[turn] started: {event.get('prompt', '')!r}")
        elif kind == "tool-call":
            tool = str(event.get("tool"))
            title = str(event.get("title") or tool)
            if not title.startswith(tool):
                title = f"{tool}: {title}"  # "bash: python3 -m unittest", but "read calc.py"
            self._titles[str(event.get("callId"))] = title
            self.line(f"[tool] {title}")
        elif kind == "tool-result":
            self.line(self._result(event))
        elif kind == "permission-request":
            title = str(event.get("title"))
            command = (event.get("input") or {}).get("command")
            if event.get("tool") == "bash" and command:
                title = f"run `{command}`"
            self.line(f"[permission] {event.get('tool')} asks: {title}")
            diff = event.get("diff")
            if diff:
                self.line(_indent(str(diff).rstrip("\n")))
        elif kind == "permission-resolved":
            self.line(f"[permission] answered: {event.get('decision')}")
        elif kind == "retry":
            self.line(f"[retry {event.get('attempt')}] {event.get('reason')}")
        elif kind == "compaction":
            self.line(f"[compaction] {event.get('status')}")
        elif kind == "progress":
            self.line(f"[progress] {event.get('message')}")
        elif kind == "error":
            self.line(f"[error] {event.get('message')}")
        elif kind == "turn-end":
            self.line(f"[turn] ended: {event.get('finishReason')}")
        # usage and thinking-delta: not shown (the answer carries the turn's usage).

    def _result(self, event: dict[str, Any]) -> str:
        """`[+] title` (`[x]` for an error), then the output's first lines and its last line."""
        call_id = str(event.get("callId"))
        title = self._titles.pop(call_id, str(event.get("tool")))
        mark = "x" if event.get("isError") else "+"
        lines = [line.expandtabs(4).rstrip() for line in str(event.get("output", "")).splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        if len(lines) > RESULT_LINES + 1:
            hidden = len(lines) - RESULT_LINES - 1
            lines = [*lines[:RESULT_LINES], f"... ({hidden} more lines)", lines[-1]]
        shown = [line if len(line) <= 100 else line[:100] + " ..." for line in lines]
        return "\n".join([f"[{mark}] {title}", *(f"      {line}" for line in shown)])


def apply_workspace_edit(edit: types.WorkspaceEdit, encoding: str = "utf-16") -> list[Path]:
    """Apply a WorkspaceEdit to the files on disk (an editor with no open buffers); returns the
    files changed. Raises ValueError for what this editor did not declare."""
    changed: list[Path] = []

    def path_of(uri: str) -> Path:
        fs_path = to_fs_path(uri)
        if not fs_path:
            raise ValueError(f"not a file URI: {uri}")
        return Path(fs_path)

    def edit_file(uri: str, edits: list[types.TextEdit]) -> None:
        path = path_of(uri)
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(apply_text_edits(text, edits, encoding))
        changed.append(path)

    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = path_of(change.uri)
            options = change.options
            if path.exists():
                if options is not None and options.ignore_if_exists:
                    continue
                if options is None or not options.overwrite:
                    raise ValueError(f"{path} already exists")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
            changed.append(path)
        elif isinstance(change, types.TextDocumentEdit):
            text_edits = [
                types.TextEdit(range=e.range, new_text=e.new_text)
                for e in change.edits
                if isinstance(e, types.TextEdit | types.AnnotatedTextEdit)
            ]
            if len(text_edits) != len(change.edits):
                raise ValueError("this editor does not do snippet edits")
            edit_file(change.text_document.uri, text_edits)
        else:
            raise ValueError(f"this editor does not do {type(change).__name__}")
    for uri, edits in (edit.changes or {}).items():
        edit_file(uri, list(edits))
    return changed


class DemoClient:
    """Starts `agentls serve`, speaks LSP to it, applies its edits and approves its asks."""

    def __init__(self, root: Path, out: TextIO, env: dict[str, str] | None = None) -> None:
        self.root = root
        self.out = out
        self.env = env
        self.transcript = Transcript(out)
        self.client = LanguageClient("agentls-demo", __version__, converter_factory=_converter)
        self.encoding = "utf-16"
        self.server_stderr: deque[str] = deque(maxlen=40)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._install_handlers()

    # ---- what the server sends ----------------------------------------------------------

    def _install_handlers(self) -> None:
        def on_event(params: Any) -> None:
            event = dict(params)
            self.transcript.event(event)
            if event.get("type") == "permission-request":
                self.transcript.line(
                    f"[demo] auto-approving {event.get('requestId')}: agent/approve, decision 'once'"
                )
                self._spawn(
                    "agent/approve",
                    self.request(
                        "agent/approve",
                        {
                            "sessionId": event["sessionId"],
                            "requestId": event["requestId"],
                            "decision": "once",
                        },
                    ),
                )

        def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            try:
                changed = apply_workspace_edit(params.edit, self.encoding)
            except (OSError, ValueError) as exc:
                self.transcript.line(f"[editor] could not apply {params.label or 'an edit'}: {exc}")
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason=str(exc))
            names = ", ".join(self._label(p) for p in changed) or "nothing"
            self.transcript.line(f"[editor] workspace/applyEdit applied to disk: {names}")
            return types.ApplyWorkspaceEditResult(applied=True)

        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            if params.diagnostics:
                path = Path(to_fs_path(params.uri) or params.uri)
                for diagnostic in params.diagnostics:
                    self.transcript.line(
                        f"[editor] {self._label(path)}:{diagnostic.range.start.line + 1}: "
                        f"{diagnostic.message}"
                    )

        def on_log(params: types.LogMessageParams) -> None:
            if params.type in (types.MessageType.Error, types.MessageType.Warning):
                self.transcript.line(f"[server] {params.message}")

        def on_show(params: types.ShowMessageParams) -> None:
            self.transcript.line(f"[server] {params.message}")

        for method, handler in (
            ("agent/event", on_event),
            (types.WORKSPACE_APPLY_EDIT, on_apply_edit),
            (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, on_diagnostics),
            (types.WINDOW_LOG_MESSAGE, on_log),
            (types.WINDOW_SHOW_MESSAGE, on_show),
        ):
            self.client.feature(method)(handler)

    def _label(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _spawn(self, what: str, coro: Any) -> None:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                self.transcript.line(f"[demo] {what} failed: {t.exception()}")

        task.add_done_callback(done)

    # ---- life cycle ---------------------------------------------------------------------

    async def start(self, agent_options: dict[str, Any]) -> types.InitializeResult:
        """Start `agentls serve` in the project folder and initialize it."""
        await self.client.start_io(
            sys.executable, "-m", "agentls.cli.main", "serve", cwd=self.root, env=self.env
        )
        server = self.client._server
        if server is not None and server.stderr is not None:
            self._spawn("reading the server's stderr", self._drain(server.stderr))
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=True,
                workspace_edit=types.WorkspaceEditClientCapabilities(
                    document_changes=True,
                    resource_operations=[types.ResourceOperationKind.Create],
                ),
            ),
            experimental={"agent": {"approvals": True}},
        )
        params = types.InitializeParams(
            process_id=os.getpid(),
            capabilities=capabilities,
            root_uri=from_fs_path(str(self.root)),
            workspace_folders=[
                types.WorkspaceFolder(uri=str(from_fs_path(str(self.root))), name=self.root.name)
            ],
            client_info=types.ClientInfo(name="agentls-demo", version=__version__),
            initialization_options={"agent": agent_options},
        )
        result: types.InitializeResult = await self._wait(
            self.client.initialize_async(params), "initialize", START_TIMEOUT_S
        )
        encoding = result.capabilities.position_encoding
        self.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
        self.client.initialized(types.InitializedParams())
        return result

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        """Keep the server's stderr flowing (a full pipe would stall it), the end kept for errors."""
        while line := await stream.readline():
            self.server_stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    async def request(self, method: str, params: Any, wait_s: float = REQUEST_TIMEOUT_S) -> Any:
        future = self.client.protocol.send_request_async(method, params)
        return await self._wait(future, method, wait_s)

    async def _wait(self, awaitable: Any, what: str, wait_s: float) -> Any:
        try:
            return await asyncio.wait_for(awaitable, wait_s)
        except TimeoutError:
            raise DemoError(f"{what}: no answer from agentls serve within {wait_s:.0f} s") from None
        except JsonRpcException as exc:
            raise DemoError(f"{what} failed: {exc}") from None
        except RuntimeError as exc:  # pygls fails pending requests when the server exits
            raise DemoError(f"{what}: {exc}") from None

    async def stop(self) -> None:
        """shutdown, exit, and wait for the server to end (killed if it does not)."""
        server = self.client._server
        try:
            if server is not None and server.returncode is None:
                await self._wait(self.client.shutdown_async(None), "shutdown", STOP_TIMEOUT_S)
                self.client.exit(None)
                await asyncio.wait_for(server.wait(), STOP_TIMEOUT_S)
        except (DemoError, TimeoutError):
            pass
        finally:
            if server is not None and server.returncode is None:
                server.kill()
                await server.wait()
            await asyncio.wait_for(self.client.stop(), STOP_TIMEOUT_S)  # type: ignore[no-untyped-call]
            for task in list(self._tasks):
                task.cancel()


async def fix_with_agent(root: Path, prompt: str, out: TextIO, env: dict[str, str]) -> bool:
    """Run one prompt through `agentls serve` with the scripted model; True if the turn ended
    normally. The transcript goes to `out`."""
    demo = DemoClient(root, out, env)
    transcript = demo.transcript
    try:
        init = await demo.start({"model": "scripted:demo"})
        info = init.server_info
        transcript.line(
            f"[demo] started {info.name if info else 'agentls'} {info.version if info else ''} "
            f"(agentls serve, pid {demo.client._server.pid if demo.client._server else '?'}) "
            "over stdio; this client declares workspace.applyEdit and agent approvals"
        )
        session = await demo.request("agent/newSession", {"title": "make demo"})
        session_id = str(session["sessionId"])
        transcript.line(f"[demo] agent/newSession -> {session_id}")
        transcript.line(f"[demo] agent/prompt: {prompt!r}")
        answer = await demo.request(
            "agent/prompt", {"sessionId": session_id, "text": prompt}, wait_s=120.0
        )
        usage = answer.get("usage") or {}
        transcript.line(
            f"[demo] agent/prompt answered: finishReason {answer.get('finishReason')}, "
            f"{usage.get('inputTokens', 0)} input / {usage.get('outputTokens', 0)} output tokens "
            "(the scripted model counts tokens but costs nothing)"
        )
        return bool(answer.get("finishReason") == "end_turn")
    except DemoError as exc:
        transcript.line(f"[demo] {exc}")
        if demo.server_stderr:
            transcript.line(
                "[demo] agentls serve stderr (last lines):\n" + "\n".join(demo.server_stderr)
            )
        return False
    finally:
        await demo.stop()
