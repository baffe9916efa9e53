"""What `agentls run` shows and asks at the terminal: the events as a person reads them
(TerminalPrinter) or as JSON lines (json_printer), and the questions (terminal_presenter; an
approval's question and keys: cli/approval.py), their answers read without blocking the loop."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from agentls.session.finish_gate import summary as gate_summary


class TerminalPrinter:
    """Renders events for a person: streamed text, one line per tool call, errors."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.at_line_start = True
        self._titles: dict[str, str] = {}
        self._progressing: set[str] = set()  # calls whose progress is shown

    def _newline(self) -> None:
        if not self.at_line_start:
            self.out.write("\n")
            self.at_line_start = True

    def __call__(self, event: Any) -> None:
        kind = event.type
        if event.parent_session_id is not None:
            self._sub_agent(event)
        elif kind == "text-delta":
            self.out.write(event.delta)
            self.at_line_start = event.delta.endswith("\n")
        elif kind == "tool-result":
            self._newline()
            lines = event.output.splitlines() or [""]
            first = lines[0][:120]
            more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
            mark = "x" if event.is_error else "+"
            self._progressing.discard(event.call_id)
            self.out.write(
                f"[{mark}] {self._titles.pop(event.call_id, event.tool)}: {first}{more}\n"
            )
        elif kind == "tool-call":
            self._titles[event.call_id] = event.title
            if event.tool.startswith("mcp__"):
                self._progressing.add(event.call_id)
            if event.tool == "exit_plan":  # the plan, in every mode, before it is approved
                self._newline()
                self.out.write(f"Plan:\n{str(event.input.get('plan', '')).strip()}\n")
        elif kind == "progress" and event.call_id in self._progressing:
            # An MCP server's progress notifications (bash's lines would drown the output).
            self._newline()
            self.out.write(f"[..] {self._titles.get(event.call_id, '')}: {event.message}\n")
        elif kind == "retry":
            self._newline()
            self.out.write(
                f"[retry {event.attempt}] {event.reason}; again in {event.delay_ms} ms\n"
            )
        elif kind == "compaction":
            self._newline()
            if event.status == "started":
                self.out.write(
                    f"[compacting] context {event.context_tokens:,} of "
                    f"{event.context_window:,} tokens: summarizing the older history\n"
                )
            elif event.status == "done":
                self.out.write(f"[compacted] {event.summarized_messages} messages summarized\n")
            else:
                self.out.write(f"[compaction failed] {event.error}; going on without it\n")
        elif kind == "todo":
            self._newline()
            done = sum(1 for t in event.todos if t.status == "completed")
            marks = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}
            self.out.write(f"Todo ({done}/{len(event.todos)} done):\n")
            for todo in event.todos:
                self.out.write(f"  {marks[todo.status]} {todo.content}\n")
        elif kind == "mode":
            self._newline()
            self.out.write(f"[mode] {event.mode}\n")
        elif kind == "finish-gate":
            self._newline()
            self.out.write(f"[finish gate] {gate_summary(event)}\n")
        elif kind == "hook":
            from agentls.cli.hooks import hook_line

            self._newline()
            self.out.write(hook_line(event) + "\n")
        elif kind == "error":
            self._newline()
            self.out.write(failure_lines(event))
        elif kind == "turn-end":
            self._newline()
        self.out.flush()

    def _sub_agent(self, event: Any) -> None:
        """A sub-agent's steps (the task tool's), indented under its task: its start, each tool
        call's result, its errors; its text is in the task's result."""
        kind = event.type
        if kind == "tool-call":
            self._titles[event.call_id] = event.title
            return
        if kind == "turn-start":
            line = f"[{event.agent}] {' '.join(event.prompt.split())[:100]}"
        elif kind == "tool-result":
            first = (event.output.splitlines() or [""])[0][:100]
            mark = "x" if event.is_error else "+"
            line = f"[{mark}] {self._titles.pop(event.call_id, event.tool)}: {first}"
        elif kind == "error":
            line = f"[error] {event.message}"
        else:
            return
        self._newline()
        self.out.write(f"    {line}\n")


def failure_lines(event: Any) -> str:
    """An error event for a person: what happened, and for a failed turn the next step, how to
    retry it and the details (the exception)."""
    lines = [f"[error] {event.message}"]
    if event.next_step:
        lines.append(f"        {event.next_step}")
    if event.retryable:
        lines.append(f"        To retry: agentls run --session {event.session_id} --retry")
    if event.details and event.details != event.message:
        lines.append(f"        (details: {event.details})")
    return "".join(f"{line}\n" for line in lines)


def json_printer(out: TextIO) -> Any:
    import json

    def sink(event: Any) -> None:
        out.write(json.dumps(event.wire(), ensure_ascii=False) + "\n")
        out.flush()

    return sink


def user_question(query: Any) -> str:
    """ask_user's question at the terminal: the question, its choices numbered, the prompt."""
    choices = [c for c in query.input.get("choices") or [] if isinstance(c, str)]
    lines = [f"\nThe agent asks: {query.input.get('question', '')}"]
    lines += [f"  {n}. {choice}" for n, choice in enumerate(choices, 1)]
    pick = "a number or your own words" if choices else "your answer"
    return "\n".join(lines) + f"\nAnswer ({pick}; empty to skip): "


def user_answer(query: Any, reply: str) -> str:
    """The answer a reply to user_question gives: a choice by its number, else the words."""
    choices = [c for c in query.input.get("choices") or [] if isinstance(c, str)]
    if reply.isdigit() and 1 <= int(reply) <= len(choices):
        return choices[int(reply) - 1]
    return reply


async def read_terminal_line() -> str:
    """One line from stdin (a terminal), "" at its end. Read by the event loop (add_reader), not
    by a thread blocked in readline: a cancel (Ctrl+C ends the turn) stops the wait at once,
    where such a thread would keep the process alive until Enter."""
    import asyncio
    import os

    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno()
    line: asyncio.Future[str] = loop.create_future()
    chunks: list[bytes] = []

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        chunks.append(data)
        if (not data or b"\n" in data) and not line.done():
            text = b"".join(chunks).decode("utf-8", "replace")
            line.set_result(text.split("\n", 1)[0])

    loop.add_reader(fd, readable)
    try:
        return await line
    finally:
        loop.remove_reader(fd)


def discard_typeahead() -> None:
    """Drop what was typed at the terminal and not read yet (keys pressed while the model
    streamed): an answer is read only after its question was shown."""
    import termios

    try:
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (OSError, ValueError, termios.error):
        pass


async def read_terminal_key(keys: str, show: Callable[[], None]) -> str:
    """One key of `keys` (letters) pressed at the terminal after `show()` printed the question,
    read without Enter (the terminal in cbreak mode, no echo, until it returns); what was typed
    before is discarded, other keys, Enter among them, are ignored. An upper-case letter not in
    `keys` counts as its lower-case one ("Y" is "y"; "A" is itself where `keys` has it). "" at
    the end of input. Ctrl+C still interrupts (cbreak keeps signals)."""
    import asyncio
    import os
    import termios
    import tty

    fd = sys.stdin.fileno()
    try:
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError):
        saved = None
    loop = asyncio.get_running_loop()
    key: asyncio.Future[str] = loop.create_future()

    def readable() -> None:
        if key.done():
            return
        try:  # one byte at a time: what follows the key stays for the next question
            data = os.read(fd, 1)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            key.set_result("")
            return
        char = data.decode("ascii", "replace")
        if char not in keys:
            char = char.lower()
        if char in keys:
            key.set_result(char)

    try:
        if saved is not None:
            tty.setcbreak(fd, termios.TCSANOW)
        discard_typeahead()
        show()
        loop.add_reader(fd, readable)
        try:
            return await key
        finally:
            loop.remove_reader(fd)
    finally:
        if saved is not None:
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def terminal_presenter(agent: Any, yes: bool, out: TextIO) -> Any:
    """The CLI's QuestionPresenter (see agentls.session.Agent.ask): --yes allows every call once;
    without a terminal each call is refused as "unattended" (the model is told no one can be
    asked; the user, on `out`, how to allow it); else the question is asked at the terminal, its
    answer given to agent.approve. ask_user's questions are asked at a terminal with --yes too."""
    import asyncio
    from contextlib import contextmanager

    from agentls.cli.approval import ask_approval
    from agentls.session import ApprovalError

    tty = sys.stdin.isatty()
    interactive = tty and not yes
    hinted = False  # the how-to-allow hint is printed once (a run is one turn)

    def answer(
        question: Any,
        decision: str,
        feedback: str | None = None,
        scope: str = "session",
        accepted: Any = None,
    ) -> None:
        try:
            agent.approve(
                question.session_id, question.request_id, decision, feedback, scope, accepted
            )
        except ApprovalError:
            pass  # expired or cancelled meanwhile

    async def ask_at_terminal(question: Any) -> None:
        query = question.query
        discard_typeahead()  # keys typed before the question answer nothing
        if query.tool == "ask_user":
            out.write(user_question(query))
            out.flush()
            reply = (await read_terminal_line()).strip()
            if not reply:
                return answer(question, "reject")
            return answer(question, "once", user_answer(query, reply))
        await ask_approval(
            out,
            question,
            agent.root,
            lambda *a, **k: answer(question, *a, **k),
            read_terminal_key,
            read_terminal_line,
        )

    @contextmanager
    def present(question: Any) -> Any:
        nonlocal hinted
        query = question.query
        asking: asyncio.Task[None] | None = None
        if query.tool == "ask_user" and not tty:
            out.write(f"\nThe agent asked (no terminal to answer): {query.input.get('question')}\n")
            out.flush()
            answer(question, "unattended")
        elif query.tool == "ask_user":
            asking = asyncio.ensure_future(ask_at_terminal(question))
        elif yes:
            if query.tool == "exit_plan":
                out.write("\nPlan approved (--yes): building it now.\n")
                out.flush()
            answer(question, "once")
        elif not interactive and query.tool == "exit_plan":
            out.write(
                "\nThe plan is above (no terminal to approve it; continue the session without "
                "--plan to build it).\n"
            )
            out.flush()
            answer(question, "unattended")
        elif not interactive:
            how = (
                "Rerun with --yes to allow every call, or allow it with a permission rule, e.g. "
                f'in .agentls/config.json: {{"permissions": {{"{query.tool}": "allow"}}}}'
            )
            if not hinted:
                # For the user only: the model is told no one can be asked, not how to allow it.
                hinted = True
                out.write(f"\nagentls: refused {query.title}: no terminal to ask you. {how}\n")
                out.flush()
            answer(question, "unattended")
        else:
            asking = asyncio.ensure_future(ask_at_terminal(question))
        try:
            yield
        finally:
            if asking is not None:
                asking.cancel()  # answered elsewhere, expired, or the turn was cancelled

    return present
