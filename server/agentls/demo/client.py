"""The demo's editor: a minimal LSP client that runs `agentls serve` and prints what happens.

It has no buffers. It declares `workspace.applyEdit` (with documentChanges and file creation) and
applies the server's workspace edits to the files on disk, declares agent approvals and answers
every permission request with `agent/approve` "once" (saying so), and prints the streamed
`agent/event` notifications as a transcript: text inline, one line per tool call, abbreviated
tool results, permission requests with their diff.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from agentls.lsp.client import AgentClient, agent_capabilities, apply_workspace_edit

START_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 30.0
RESULT_LINES = 2  # first lines of a tool result shown in the transcript (and its last)


class DemoError(Exception):
    """The server misbehaved or went away; the message says how."""


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


class DemoClient(AgentClient):
    """Starts `agentls serve`, speaks LSP to it, applies its edits and approves its asks, and prints
    what happens."""

    def __init__(self, root: Path, out: TextIO, env: dict[str, str] | None = None) -> None:
        super().__init__(auto_approve=True, record_events=False)
        self.root = root
        self.out = out
        self.env = env
        self.transcript = Transcript(out)
        self._install_handlers()

    # ---- what the server sends ----------------------------------------------------------

    def on_event(self, event: dict[str, Any]) -> None:
        self.transcript.event(event)
        if event.get("type") == "permission-request":
            self.transcript.line(
                f"[demo] auto-approving {event.get('requestId')}: agent/approve, decision 'once'"
            )

    def task_failed(self, what: str, error: BaseException | None) -> None:
        self.transcript.line(f"[demo] {what} failed: {error}")

    def _install_handlers(self) -> None:
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

    # ---- life cycle ---------------------------------------------------------------------

    async def begin(self, agent_options: dict[str, Any]) -> types.InitializeResult:
        """Start `agentls serve` in the project folder and initialize it."""
        await self.start(self.root, self.env)
        capabilities = agent_capabilities(approvals=True, resource_operations=("create",))
        params = self.initialize_params(self.root, capabilities, agent_options, "agentls-demo")
        result: types.InitializeResult = await self._wait(
            self.initialize(params, START_TIMEOUT_S), "initialize"
        )
        return result

    async def ask(self, method: str, params: Any, wait_s: float = REQUEST_TIMEOUT_S) -> Any:
        """A request whose failure is a DemoError saying what went wrong."""
        return await self._wait(self.request(method, params, wait_s), method, wait_s)

    async def _wait(self, awaitable: Any, what: str, wait_s: float = START_TIMEOUT_S) -> Any:
        try:
            return await awaitable
        except TimeoutError:
            raise DemoError(f"{what}: no answer from agentls serve within {wait_s:.0f} s") from None
        except JsonRpcException as exc:
            raise DemoError(f"{what} failed: {exc}") from None
        except RuntimeError as exc:  # pygls fails pending requests when the server exits
            raise DemoError(f"{what}: {exc}") from None


async def fix_with_agent(root: Path, prompt: str, out: TextIO, env: dict[str, str]) -> bool:
    """Run one prompt through `agentls serve` with the scripted model; True if the turn ended
    normally. The transcript goes to `out`."""
    demo = DemoClient(root, out, env)
    transcript = demo.transcript
    try:
        init = await demo.begin({"model": "scripted:demo"})
        info = init.server_info
        transcript.line(
            f"[demo] started {info.name if info else 'agentls'} {info.version if info else ''} "
            f"(agentls serve, pid {demo.pid or '?'}) "
            "over stdio; this client declares workspace.applyEdit and agent approvals"
        )
        session = await demo.ask("agent/newSession", {"title": "make demo"})
        session_id = str(session["sessionId"])
        transcript.line(f"[demo] agent/newSession -> {session_id}")
        transcript.line(f"[demo] agent/prompt: {prompt!r}")
        answer = await demo.ask(
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
