"""What code_actions and apply_code_action share: the language servers' code actions at a range
of lines of a file (`textDocument/codeAction`, with the diagnostics there as its context, so
quick fixes come), and how each is shown: numbered, with its kind, whether it is preferred, and
whether it only runs a command."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from agentls.language.positions import utf16_length
from agentls.tools.base import ToolContext, ToolError, ToolInput
from agentls.tools.support.lookup import as_list, ask, ask_if_offered, read_source

# How long the diagnostics of the lines are waited for (a server that publishes none is not waited
# for longer: its actions are asked without them).
DIAGNOSTICS_WAIT_S = 5.0


class RangeInput(ToolInput):
    path: str = Field(description="The file.")
    line: int = Field(ge=1, description="The first line of the range (1-based).")
    end_line: int | None = Field(
        default=None, ge=1, description="The last line of the range (1-based); default: `line`."
    )

    @model_validator(mode="after")
    def _ordered(self) -> RangeInput:
        if self.end_line is not None and self.end_line < self.line:
            raise ValueError(f"end_line ({self.end_line}) is before line ({self.line})")
        return self


@dataclass
class Actions:
    path: Path
    rel: str
    text: str
    items: list[dict[str, Any]]  # CodeAction or Command objects, as the servers sent them

    def where(self, params: RangeInput) -> str:
        end = params.end_line or params.line
        return f"{self.rel}:{params.line}" + (f"-{end}" if end != params.line else "")


def _overlaps(diagnostic: Any, first: int, last: int) -> bool:
    rng: Any = diagnostic.get("range") if isinstance(diagnostic, dict) else None
    try:
        start, end = rng["start"]["line"], rng["end"]["line"]
    except (KeyError, TypeError):
        return False
    return isinstance(start, int) and isinstance(end, int) and start <= last and end >= first


async def fetch_actions(
    ctx: ToolContext,
    tool: str,
    params: RangeInput,
    only: str | None = None,
    *,
    authorize: bool = True,
) -> Actions:
    """The code actions at the call's lines (allowed as a read of the file first, unless
    `authorize` is False: the caller asks about the change itself)."""
    path = ctx.resolve_path(params.path, tool=tool)
    rel = ctx.relative(path)
    if authorize:
        await ctx.authorize_path(tool, path, f"Code actions in {rel}", params)
    text = await read_source(ctx, path, rel)
    lines = text.splitlines()
    end_line = params.end_line or params.line
    if params.line > max(len(lines), 1):
        raise ToolError(f"line {params.line} is past the end of {rel} ({len(lines)} lines).")
    end_line = min(end_line, max(len(lines), 1))
    last = lines[end_line - 1] if lines else ""
    uri = path.as_uri()
    first0, last0 = params.line - 1, end_line - 1
    try:  # the diagnostics there: the quick fixes are for them (a bounded wait: none is fine)
        _, report = await asyncio.wait_for(
            ask_if_offered(ctx, "textDocument/diagnostic", {"textDocument": {"uri": uri}}, path),
            DIAGNOSTICS_WAIT_S,
        )
    except (ToolError, TimeoutError):
        report = None
    items = report.get("items") if isinstance(report, dict) else None
    diagnostics = [d for d in items or [] if _overlaps(d, first0, last0)]
    context: dict[str, Any] = {"diagnostics": diagnostics, "triggerKind": 1}
    if only:
        context["only"] = [only]
    request = {
        "textDocument": {"uri": uri},
        "range": {
            "start": {"line": first0, "character": 0},
            "end": {"line": last0, "character": utf16_length(last)},
        },
        "context": context,
    }
    answer = await ask(ctx, "textDocument/codeAction", request, path)
    found = [a for a in as_list(answer) if isinstance(a, dict) and isinstance(a.get("title"), str)]
    return Actions(path, rel, text, found)


def is_bare_command(action: dict[str, Any]) -> bool:
    """A Command rather than a CodeAction (its `command` is the command's name)."""
    return isinstance(action.get("command"), str)


def command_of(action: dict[str, Any]) -> dict[str, Any] | None:
    """The Command an action runs ({title, command, arguments?}), if any."""
    if is_bare_command(action):
        return action
    command = action.get("command")
    return (
        command if isinstance(command, dict) and isinstance(command.get("command"), str) else None
    )


def kind_of(action: dict[str, Any]) -> str:
    kind = action.get("kind")
    return kind if isinstance(kind, str) and kind else "command" if is_bare_command(action) else ""


def describe(number: int, action: dict[str, Any]) -> str:
    """One line: the number, title, [kind], preferred, what it runs, why it is disabled."""
    parts = [f"  {number}. {action['title']}"]
    kind = kind_of(action)
    if kind:
        parts.append(f"[{kind}]")
    if action.get("isPreferred") is True:
        parts.append("(preferred)")
    command = command_of(action)
    if command is not None and "edit" not in action:
        parts.append(f"(runs the language server's command {command['command']})")
    disabled = action.get("disabled")
    if isinstance(disabled, dict):
        parts.append(f"(disabled: {disabled.get('reason', 'no reason given')})")
    fixes = [
        str(d.get("message", "")).splitlines()[0]
        for d in action.get("diagnostics") or []
        if isinstance(d, dict) and d.get("message")
    ]
    if fixes:
        parts.append("- fixes: " + "; ".join(fixes[:3]))
    return " ".join(parts)


# The kinds some servers give actions of only when `only` asks for them.
ONLY_WHEN_ASKED = ("source", "refactor")


def same_title(have: str, wanted: str, fold: bool = True) -> bool:
    """Whether an action's title is the one asked for (spacing ignored, and case when `fold`)."""
    have, wanted = " ".join(have.split()), " ".join(wanted.split())
    return have == wanted or (fold and have.casefold() == wanted.casefold())


def find_action(actions: Actions, title: str, where: str) -> dict[str, Any]:
    """The action titled `title` (exactly, else ignoring case and spacing); a ToolError listing
    the titles there when none is."""
    for fold in (False, True):
        for action in actions.items:
            if same_title(action["title"], title, fold):
                return action
    if not actions.items:
        raise ToolError(f"No code action at {where}; nothing was changed.")
    titles = "\n".join(f"  {a['title']}" for a in actions.items)
    raise ToolError(
        f"No code action titled {title!r} at {where}. The actions there are:\n{titles}\n"
        "Give one of these titles exactly."
    )
