"""`agentls` (or `agentls chat`): a conversation at the terminal.

A prompt line (prompt_toolkit) with history, editing, multi-line input (Alt+Enter, or a line ending
in a backslash, starts a new line; Enter sends) and completion of the slash commands and of
@-mentioned files; each prompt runs a turn of one session, rendered by cli/render.py. Ctrl+C stops
a running turn and the conversation goes on; at the prompt it clears the line; Ctrl+D leaves,
printing the command that resumes the session. The session is stored like any other: `-c` goes on
with the workspace's last one, `--resume` picks one, and the editor's history lists it.

The chat's own commands: /expand [N] (a tool call's whole output), /new, /status, /help, /exit.
Everything else, "/NAME args" included, goes to the agent."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import signal
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import Completer, Completion

from agentls.cli.printing import TerminalPrinter, terminal_presenter
from agentls.cli.render import RichPrinter
from agentls.cli.resume import last_session, pick_session, resume_hint
from agentls.cli.skills import say_untrusted_skills
from agentls.cli.terminal import make_console, visible, visible_stream, wants_colour

if TYPE_CHECKING:
    import argparse

    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from agentls.session import Agent

EXIT_OK = 0
EXIT_USAGE = 2
LOCAL_COMMANDS = {
    "expand": "show a tool call's whole output: /expand N (the last one without N)",
    "new": "start a new session",
    "status": "the model, mode, tokens and cost of this session",
    "help": "what you can type here",
    "exit": "leave (Ctrl+D does too)",
}
MENTION = re.compile(r"(?<![\w@])@([\w./~-]*[\w/-])")
HELP = """Enter sends; Alt+Enter (or a line ending in \\) starts a new line; Up/Down for history.
@path attaches a workspace file; Tab completes commands and files.
Ctrl+C stops a running turn (at the prompt it clears the line); Ctrl+D leaves.
"""


class ChatCompleter(Completer):
    """Completion of "/command" at the start of the prompt and "@file" anywhere in it."""

    def __init__(self, commands: dict[str, str], files: list[str]) -> None:
        self.commands = commands
        self.files = files

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if before.startswith("/") and " " not in before:
            typed = before[1:]
            for name in sorted(self.commands):
                if name.startswith(typed):
                    yield Completion(
                        name, -len(typed), display=f"/{name}", display_meta=self.commands[name]
                    )
        elif word.startswith("@"):
            typed = word[1:]
            yield from self._files(typed)

    def _files(self, typed: str) -> Iterable[Completion]:
        lowered = typed.lower()
        starts = [f for f in self.files if f.lower().startswith(lowered)]
        inside = [f for f in self.files if lowered in f.lower() and f not in starts]
        for path in (starts + inside)[:50]:
            yield Completion(path, -len(typed), display=path)


def workspace_files(root: Path, limit: int = 20000) -> list[str]:
    """The workspace's files as @-mentions name them (ripgrep's list: .gitignore'd and hidden
    files left out), at most `limit`."""
    import subprocess

    from agentls.tools.support.ripgrep import rg_binary

    try:
        listed = subprocess.run(
            [rg_binary(), "--files", "--sort", "path"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return listed.splitlines()[:limit]


def mentioned_files(text: str, root: Path) -> list[Path]:
    """The workspace files the prompt's @paths name (an @word that names no file is left as
    text); the Agent checks each against the read rules before the model sees it."""
    found: list[Path] = []
    for raw in MENTION.findall(text):
        path = (root / raw).resolve()
        if path.is_file() and path not in found:
            found.append(path)
    return found


class Chat:
    """One conversation: the agent, its session (made at the first prompt), the printer."""

    def __init__(self, agent: Agent, root: Path, printer: TerminalPrinter, model: str) -> None:
        self.agent = agent
        self.root = root
        self.printer = printer
        self.model = model
        self.session_id: str | None = None
        self.running: asyncio.Task[Any] | None = None

    def say(self, text: str, style: str = "dim") -> None:
        if isinstance(self.printer, RichPrinter):
            from rich.text import Text

            self.printer.console.print(Text(visible(text), style=style))
        else:
            self.printer.out.write(text + "\n")
            self.printer.out.flush()

    async def local(self, text: str) -> bool:
        """Run one of the chat's own commands; False: not one of them."""
        name, _, args = text[1:].partition(" ")
        if name not in LOCAL_COMMANDS or not text.startswith("/"):
            return False
        if name == "expand":
            number = int(args) if args.strip().isdigit() else None
            shown = isinstance(self.printer, RichPrinter) and self.printer.expand(number)
            if not shown:
                self.say("No tool call to expand" + (f" numbered {args.strip()}" if args else ""))
        elif name == "new":
            self.session_id = None
            self.say("A new session starts with your next prompt.")
        elif name == "status":
            self.say(self.status_line())
        elif name == "help":
            self.say(HELP.rstrip("\n"), style="")
            for cmd, what in sorted(self.agent_commands().items()):
                self.say(f"  /{cmd}  {what}", style="")
        elif name == "exit":
            raise EOFError
        return True

    def agent_commands(self) -> dict[str, str]:
        commands = {name: c.description for name, c in self.agent.list_commands().items()}
        return {**commands, **LOCAL_COMMANDS}

    def status_line(self) -> str:
        if isinstance(self.printer, RichPrinter):
            status = self.printer.status
            status.model = self.model
            return status.line()
        return f"{self.model} · session {self.session_id or '(none yet)'}"

    async def turn(self, text: str) -> None:
        """Run one prompt as a turn; Ctrl+C (SIGINT) meanwhile cancels it, not the chat."""
        from agentls.session import CommandError, FileItem, PromptRefused

        if self.session_id is None:
            self.session_id = (await self.agent.new_session(model=self.model)).id
        session_id = self.session_id
        items = [FileItem(path=p, uri=p.as_uri()) for p in mentioned_files(text, self.root)]
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(
            signal.SIGINT, lambda: asyncio.ensure_future(self.agent.cancel(session_id))
        )
        try:
            result = await self.agent.prompt_with_items(session_id, text, items)
        except (CommandError, PromptRefused) as exc:
            self.say(f"agentls: {exc}", style="red")
            return
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        if result.message_id is None and result.text:  # a built-in command's outcome
            self.say(result.text, style="")
        if result.finish_reason == "cancelled":
            self.say("(stopped; your next prompt goes on in the same session)")
        if isinstance(self.printer, RichPrinter):
            self.printer.status.model = self.model
            self.printer.show_status()


def _key_bindings() -> Any:
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter")
    def _send(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    return bindings


async def chat(args: argparse.Namespace) -> int:
    """The conversation; its exit code (0 on Ctrl+D, 2 on a usage error)."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    from agentls.cli.background_answer import waiting_notices
    from agentls.cli.trust import resolve_settings
    from agentls.session import Agent

    if not sys.stdin.isatty():
        print(
            "agentls: the conversation needs a terminal; for one prompt from a script use "
            '`agentls run "…"`',
            file=sys.stderr,
        )
        return EXIT_USAGE
    found = await resolve_settings(args)
    if found is None:
        return EXIT_USAGE
    root, settings = found
    if settings.untrusted_notice:
        print(settings.untrusted_notice, file=sys.stderr)
    say_untrusted_skills(root, settings)
    agent = await Agent.open(settings=settings, root=root, watch_instructions=False)
    agent.presenter = terminal_presenter(agent, False, visible_stream(sys.stderr))
    agent.prompt_kind = dataclasses.replace(agent.prompt_kind, attended=True)
    printer: TerminalPrinter = (
        RichPrinter(sys.stdout, make_console(sys.stdout))
        if wants_colour(sys.stdout)
        else TerminalPrinter(visible_stream(sys.stdout))
    )
    agent.subscribe(printer)
    conversation = Chat(agent, root, printer, args.model or settings.model)
    try:
        if not await _open_session(conversation, args):
            return EXIT_USAGE
        history_file = agent.store.path.parent / "cli-history"
        session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history_file)),
            completer=ChatCompleter(conversation.agent_commands(), workspace_files(root)),
            complete_while_typing=True,
            key_bindings=_key_bindings(),
            multiline=True,
            prompt_continuation="… ",
            bottom_toolbar=conversation.status_line,
        )
        conversation.say("agentls: Enter sends, Alt+Enter a new line, /help, Ctrl+D leaves.")
        said: set[str] = set()  # the background questions noticed already
        while True:
            for notice in waiting_notices(root, said):  # cli/background_answer.py
                conversation.say(notice, "yellow")
            try:
                text = await session.prompt_async("› ")
            except KeyboardInterrupt:
                continue  # Ctrl+C at the prompt clears the line
            except EOFError:
                break
            if not text.strip():
                continue
            try:
                if await conversation.local(text.strip()):
                    continue
            except EOFError:
                break
            await conversation.turn(text)
    finally:
        await agent.aclose()
        if conversation.session_id is not None:
            print(resume_hint(conversation.session_id), file=sys.stderr)
    return EXIT_OK


async def _open_session(conversation: Chat, args: argparse.Namespace) -> bool:
    """The session -c or --resume names (shown: its title and last answer), else none yet;
    False: there is none to go on with (said)."""
    agent = conversation.agent
    session_id: str | None = None
    if getattr(args, "resume", None) not in (None, ""):
        session_id = args.resume
    elif getattr(args, "resume", None) == "":
        session_id = await pick_session(agent, conversation.root)
        if session_id is None:
            return False
    elif getattr(args, "continue_", False):
        record = await last_session(agent, conversation.root)
        if record is None:
            conversation.say("No session of this workspace to continue yet; starting a new one.")
            return True
        session_id = record.id
    if session_id is None:
        return True
    try:
        history = await agent.history(session_id)
        state = await agent.session(session_id)
    except KeyError:
        print(f"agentls: no session {session_id}", file=sys.stderr)
        return False
    conversation.session_id = session_id
    conversation.model = args.model or state.record.model
    if args.model:
        await agent.set_model(session_id, args.model)
    conversation.say(f"Resumed “{state.record.title}” ({len(history)} messages).")
    _show_last_answer(conversation, history)
    return True


def _show_last_answer(conversation: Chat, history: list[Any]) -> None:
    """The last exchange of a resumed session: the user's prompt and the answer's text."""
    from agentls.cli.render import markdown

    last_user = next((m for m in reversed(history) if m.role == "user"), None)
    answer = next((m for m in reversed(history) if m.role == "assistant"), None)
    for message, prefix in ((last_user, "› "), (answer, "")):
        if message is None:
            continue
        text = "".join(getattr(p, "text", "") for p in message.parts if p.type == "text").strip()
        if not text:
            continue
        if isinstance(conversation.printer, RichPrinter) and prefix == "":
            conversation.printer.console.print(markdown(text))
        else:
            conversation.say(prefix + text, style="")
