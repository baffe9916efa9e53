"""The approval question of `agentls run` at the terminal: what the call would do (the diff in
colour, or the exact command and whether it runs sandboxed), what "always" would allow, and one
key to answer it:

  y  once                      a  always (what it allows, this session)
  A  always, in this project   p  pick hunks: each hunk shown and asked y / n; the kept ones are
  e  no, with a note (a line)     accepted as a partial accept (Agent.approve with `accepted`)
  n  no

Colours (through rich) only at a terminal without NO_COLOR (cli/render.py wants_colour); else
the same text, plain. Everything shown is made visible first (cli/terminal.py visible).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from agentls.cli.terminal import make_console, raw_stream, visible, wants_colour
from agentls.session.hunk_choice import ProposedHunk, accepted_texts, proposal_hunks

# The lines of a unified diff and their colour.
DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("+", "green"), ("-", "red"), ("@@", "cyan"))
SANDBOXED = "Sandboxed: it can write only inside the workspace, and secret files are hidden."
UNSANDBOXED = "Not sandboxed: it runs with your full access."

# answer(decision, feedback=None, scope="session", accepted=None)
Answer = Callable[..., None]
KeyReader = Callable[[str, Callable[[], None]], Any]  # read_terminal_key
LineReader = Callable[[], Any]  # read_terminal_line


def write_styled(out: TextIO, lines: list[tuple[str, str]]) -> None:
    """Each (text, style) in order: coloured at a terminal (rich styles), else plain text."""
    if not wants_colour(out):
        out.write("".join(text for text, _ in lines))
        return
    from rich.text import Text

    styled = Text()
    for text, style in lines:
        styled.append(visible(text), style=style or None)
    make_console(raw_stream(out)).print(styled, end="", soft_wrap=True)
    out.flush()


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """A unified diff's lines with their colour."""
    out = []
    for line in diff.splitlines(keepends=True):
        style = next((s for prefix, s in DIFF_STYLES if line.startswith(prefix)), "")
        out.append((line if line.endswith("\n") else line + "\n", style))
    return out


def approval_prompt(query: Any, always: str | None, hunk_count: int = 0) -> str:
    """The question's last line: the call, and the keys that answer it; the "always" ones say
    exactly what they allow (the grant's label) and are left out when "always" is not offered;
    [p]ick hunks only for a change of two hunks or more."""
    if query.tool == "exit_plan":
        return (
            "Approve this plan and start building? [y]es / [e] no, with a note / "
            "[n]o, keep planning: "
        )
    what = f"bash `{query.subject}`" if query.tool == "bash" else query.title
    keys = ["[y]es once"]
    if always:
        keys += [f"[a]lways ({always}, this session)", "[A]lways, in this project"]
    if hunk_count > 1:
        keys.append(f"[p]ick hunks (of {hunk_count})")
    keys += ["[e] no, with a note", "[n]o"]
    return f"Allow {what}? {' / '.join(keys)}: "


def answer_keys(query: Any, always: str | None, hunk_count: int) -> str:
    if query.tool == "exit_plan":
        return "yne"
    return "yne" + ("aA" if always else "") + ("p" if hunk_count > 1 else "")


def show_question(out: TextIO, question: Any) -> None:
    """What the call would do, above its question: the diff, the plan, or the command and where
    it runs."""
    query = question.query
    if query.diff:
        out.write("\n")
        write_styled(out, diff_lines(query.diff))
    if query.tool == "exit_plan" and not sys.stdout.isatty():
        # The printer showed it on stdout, which is not this terminal: show it here as well.
        out.write("\n" + str(query.input.get("plan", "")) + "\n")
    if query.tool == "bash":
        where = SANDBOXED if query.sandboxed else UNSANDBOXED
        write_styled(out, [("\n", ""), (f"  {where}\n", "green" if query.sandboxed else "yellow")])


async def pick_hunks(
    out: TextIO, root: Any, hunks: list[ProposedHunk], read_key: KeyReader
) -> list[int] | None:
    """Each hunk shown and asked y / n; the numbers of those kept, None at the end of input."""
    kept: list[int] = []
    for i, ph in enumerate(hunks):
        try:
            name = ph.path.relative_to(root).as_posix()
        except ValueError:
            name = str(ph.path)
        header = f"\nHunk {i + 1} of {len(hunks)}: {name}, {ph.where}\n"
        body = diff_lines(ph.hunk.unified())

        def show(header: str = header, body: list[tuple[str, str]] = body) -> None:
            write_styled(out, [(header, "bold"), *body])
            out.write("Keep this hunk? [y]es / [n]o: ")
            out.flush()

        key = await read_key("yn", show)
        out.write(f"{key}\n" if key else "\n")
        if not key:
            return None
        if key == "y":
            kept.append(i)
    return kept


async def ask_approval(
    out: TextIO,
    question: Any,
    root: Any,
    answer: Answer,
    read_key: KeyReader,
    read_line: LineReader,
) -> None:
    """Show the question, read its key and answer it (see the module's docstring)."""
    query = question.query
    show_question(out, question)
    hunks = proposal_hunks(query) if query.tool != "exit_plan" else []
    always = question.always

    def show() -> None:
        out.write(f"\n{approval_prompt(query, always, len(hunks))}")
        out.flush()

    # One key answers; Enter alone answers nothing. Read only after the question is shown.
    reply = await read_key(answer_keys(query, always, len(hunks)), show)
    out.write(f"{reply}\n" if reply else "\n")
    if reply == "y":
        return answer("once")
    if reply == "a":
        return answer("always")
    if reply == "A":
        return answer("always", scope="project")
    if reply == "p":
        kept = await pick_hunks(out, root, hunks, read_key)
        if kept is None:
            return answer("reject")
        texts = accepted_texts(query, kept)
        out.write(f"Kept {len(kept)} of {len(hunks)} hunks.\n")
        out.flush()
        if texts is None:
            return answer("once")
        return answer("once", accepted=texts) if texts else answer("reject")
    if reply == "e":
        out.write("Note for the agent (Enter to send): ")
        out.flush()
        note = (await read_line()).strip()
        return answer("reject", note or None)
    answer("reject")  # n, or the end of input: no one to ask
