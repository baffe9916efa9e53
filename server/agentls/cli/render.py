"""The terminal's rendered output (`agentls` chat, and `agentls run` at a terminal): the model's
Markdown with highlighted code, tables and diffs in colour (rich), tool calls as one line each
whose whole output `/expand` shows, and a status line of the model, mode, tokens and cost.

Streamed text is shown a block at a time (a block ends at a blank line outside a code fence), so a
block is drawn once, finished, and nothing on the screen is redrawn: no flicker, and the terminal's
own scrollback keeps everything. What the model or a tool wrote goes through `visible()` first
(cli/terminal.py): an escape sequence in it is shown, never sent to the terminal; and it is given
to rich as Markdown or Text, never as rich markup."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from agentls.cli.printing import TerminalPrinter, failure_lines
from agentls.cli.terminal import make_console, visible

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_THEME = "monokai"


def split_blocks(text: str) -> tuple[list[str], str]:
    """The finished Markdown blocks at the start of `text` and what is left (the block still
    being written): a block ends at a blank line that is not inside a fenced code block."""
    blocks: list[str] = []
    lines = text.split("\n")
    start = 0
    fence: str | None = None
    # The last line has no newline after it yet: it is never taken as a blank line.
    for i, line in enumerate(lines[:-1]):
        match = FENCE.match(line)
        if match:
            mark = match.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip(mark[0] + " "):
                fence = None
        elif fence is None and not line.strip() and i > start:
            block = "\n".join(lines[start:i])
            if block.strip():
                blocks.append(block)
            start = i + 1
        elif fence is None and not line.strip():
            start = i + 1
    return blocks, "\n".join(lines[start:])


def diff_renderable(diff: str) -> RenderableType:
    """A unified diff in colour: added lines green, removed red, hunk headers cyan."""
    from rich.text import Text

    text = Text()
    for line in visible(diff).splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = ""
        text.append(line + "\n", style=style)
    return text


def markdown(text: str) -> RenderableType:
    from rich.markdown import Markdown

    return Markdown(visible(text), code_theme=CODE_THEME, inline_code_theme=CODE_THEME)


@dataclass
class ToolEntry:
    number: int
    title: str
    output: str
    is_error: bool


@dataclass
class Status:
    model: str = ""
    mode: str = "build"
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    estimated: bool = False
    context_tokens: int = 0

    def line(self) -> str:
        tokens = f"{self.input_tokens:,} in / {self.output_tokens:,} out"
        cost = f"{'~' if self.estimated else ''}${self.cost_usd:.4f}"
        return f"{self.model} · {self.mode} · {tokens} · {cost}"


@dataclass
class Expansions:
    """The tool calls shown as one line each, numbered, their whole output kept for /expand."""

    entries: list[ToolEntry] = field(default_factory=list)
    keep: int = 200

    def add(self, title: str, output: str, is_error: bool) -> ToolEntry:
        number = self.entries[-1].number + 1 if self.entries else 1
        entry = ToolEntry(number, title, output, is_error)
        self.entries.append(entry)
        del self.entries[: -self.keep]
        return entry

    def find(self, number: int | None) -> ToolEntry | None:
        if number is None:
            return self.entries[-1] if self.entries else None
        return next((e for e in self.entries if e.number == number), None)


class Tail:
    """A renderable's last `height` lines: the block being streamed, as much as the screen
    holds, its newest text in view."""

    def __init__(self, inner: RenderableType, height: int) -> None:
        self.inner = inner
        self.height = height

    def __rich_console__(self, console: Console, options: Any) -> Any:
        from rich.segment import Segment

        lines = console.render_lines(self.inner, options, pad=False)
        for line in lines[-self.height :]:
            yield from line
            yield Segment.line()


class Streaming:
    """The block still being written, drawn live below what is final (rich's Live, transient:
    once the block is finished it is cleared and printed for good)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.live: Any = None
        self.drawn_at = 0.0

    def show(self, text: str) -> None:
        import time

        from rich.live import Live

        if self.live is None:
            self.live = Live(
                console=self.console,
                transient=True,
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self.live.start()
        now = time.monotonic()
        if now - self.drawn_at < 0.08:  # at most ~12 redraws a second
            return
        self.drawn_at = now
        height = max(3, self.console.size.height - 3)
        self.live.update(Tail(markdown(text), height), refresh=True)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
            self.drawn_at = 0.0


class RichPrinter(TerminalPrinter):
    """TerminalPrinter's events, rendered: the answer's Markdown a block at a time, tool calls as
    coloured one-liners numbered for /expand, the plan of exit_plan as Markdown, errors in red,
    and the status after each turn."""

    def __init__(self, out: TextIO, console: Console | None = None) -> None:
        from agentls.cli.terminal import visible_stream

        super().__init__(visible_stream(out))
        self.console = console or make_console(out)
        self.pending = ""
        self.streaming = Streaming(self.console)
        self.expansions = Expansions()
        self.status = Status()

    def __call__(self, event: Any) -> None:
        kind = event.type
        if event.parent_session_id is not None:
            self._flush_text()
            super().__call__(event)
        elif kind == "text-delta":
            self.pending += event.delta
            blocks, self.pending = split_blocks(self.pending)
            if blocks:
                self.streaming.stop()
            for block in blocks:
                self.console.print(markdown(block))
            if self.pending.strip():
                self.streaming.show(self.pending)
        elif kind == "tool-call":
            self._flush_text()
            self._titles[event.call_id] = event.title
            if event.tool.startswith("mcp__"):
                self._progressing.add(event.call_id)
            if event.tool == "exit_plan":
                plan = str(event.input.get("plan", "")).strip()
                self.console.print(self._rule("Plan"))
                self.console.print(markdown(plan) if plan else "(no plan text)")
                self.console.print(self._rule())
        elif kind == "tool-result":
            self._flush_text()
            self._tool_line(event)
        elif kind == "usage":
            session = event.session
            self.status.input_tokens = (
                session.input_tokens + session.cache_read_tokens + session.cache_write_tokens
            )
            self.status.output_tokens = session.output_tokens
            self.status.cost_usd = session.cost_usd
            self.status.estimated = bool(session.estimated)
        elif kind == "mode":
            self._flush_text()
            self.status.mode = event.mode
            self.console.print(self._dim(f"mode: {event.mode}"))
        elif kind == "error":
            self._flush_text()
            from rich.text import Text

            self.console.print(Text(visible(failure_lines(event)).rstrip("\n"), style="red"))
        elif kind == "turn-end":
            self._flush_text()
            self.at_line_start = True
        else:
            self._flush_text()
            super().__call__(event)
        self.console.file.flush()

    def _flush_text(self) -> None:
        self.streaming.stop()
        if self.pending.strip():
            self.console.print(markdown(self.pending))
        self.pending = ""

    def _tool_line(self, event: Any) -> None:
        from rich.text import Text

        title = self._titles.pop(event.call_id, event.tool)
        self._progressing.discard(event.call_id)
        entry = self.expansions.add(title, event.output, event.is_error)
        lines = event.output.splitlines() or [""]
        line = Text()
        line.append("✗ " if event.is_error else "✓ ", style="red" if event.is_error else "green")
        line.append(visible(title), style="bold")
        first = visible(lines[0])[:100]
        if first:
            line.append(f"  {first}", style="dim")
        if len(lines) > 1:
            line.append(f"  (+{len(lines) - 1} lines · /expand {entry.number})", style="dim")
        self.console.print(line, overflow="ellipsis", no_wrap=True)

    def expand(self, number: int | None) -> bool:
        """Show a tool call's whole output (the last one's without a number); False: none."""
        from rich.panel import Panel
        from rich.text import Text

        entry = self.expansions.find(number)
        if entry is None:
            return False
        looks_like_diff = entry.output.lstrip().startswith(("--- ", "diff --git", "@@ "))
        body = diff_renderable(entry.output) if looks_like_diff else Text(visible(entry.output))
        title = Text(f"[{entry.number}] {visible(entry.title)}")
        self.console.print(Panel(body, title=title, title_align="left", border_style="dim"))
        return True

    def show_status(self) -> None:
        self.console.print(self._dim(self.status.line()))

    def _dim(self, text: str) -> Any:
        from rich.text import Text

        return Text(visible(text), style="dim")

    def _rule(self, title: str = "") -> Any:
        from rich.rule import Rule

        return Rule(title, style="dim", align="left")
