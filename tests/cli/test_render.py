"""The terminal's rendering (cli/render.py): blocks are drawn once finished, what the model
writes cannot drive the terminal or rich, diffs are coloured, tool output kept for /expand."""

from __future__ import annotations

import io
from types import SimpleNamespace

from agentls.cli.render import RichPrinter, diff_renderable, split_blocks
from agentls.cli.terminal import make_console


def printer() -> tuple[RichPrinter, io.StringIO]:
    out = io.StringIO()
    console = make_console(out)
    console.width = 80
    return RichPrinter(out, console), out


def event(kind: str, **fields: object) -> SimpleNamespace:
    return SimpleNamespace(type=kind, parent_session_id=None, session_id="s", **fields)


def test_a_block_is_finished_at_a_blank_line_outside_a_code_fence() -> None:
    blocks, rest = split_blocks("One.\n\n```py\na = 1\n\nb = 2\n```\n\nThree")
    assert blocks == ["One.", "```py\na = 1\n\nb = 2\n```"]
    assert rest == "Three"


def test_a_fence_still_open_keeps_its_block_unfinished() -> None:
    blocks, rest = split_blocks("```\ncode\n\nmore code\n")
    assert blocks == []
    assert rest.startswith("```")


def test_a_blank_last_line_not_yet_ended_finishes_nothing() -> None:
    assert split_blocks("Para") == ([], "Para")
    assert split_blocks("Para\n") == ([], "Para\n")
    assert split_blocks("Para\n\n") == (["Para"], "")


def test_escape_sequences_from_the_model_are_shown_not_sent() -> None:
    show, out = printer()
    show(event("text-delta", delta="copy \x1b]52;c;cm0gLXJmIC8=\x07 this\n\n"))
    shown = out.getvalue()
    assert "\x1b]52" not in shown and "\x07" not in shown
    assert "\\x1b]52" in shown


def test_rich_markup_in_the_models_text_is_text() -> None:
    show, out = printer()
    show(event("text-delta", delta="[red]alarm[/red] [link=http://x]y[/link]\n\n"))
    assert "[red]alarm[/red]" in out.getvalue()


def test_a_tool_call_is_one_line_and_expand_shows_its_whole_output() -> None:
    show, out = printer()
    show(event("tool-call", call_id="c1", tool="read", input={}, title="Read a.py"))
    show(event("tool-result", call_id="c1", tool="read", output="l1\nl2\nl3", is_error=False))
    line = out.getvalue()
    assert "Read a.py" in line and "l1" in line and "/expand 1" in line and "l3" not in line
    assert show.expand(1) and "l3" in out.getvalue()
    assert not show.expand(7)


def test_the_plan_of_exit_plan_is_shown_as_markdown() -> None:
    show, out = printer()
    plan = "## Steps\n\n1. **Rename** the function"
    show(event("tool-call", call_id="p", tool="exit_plan", input={"plan": plan}, title="Plan"))
    shown = out.getvalue()
    assert "Steps" in shown and "Rename" in shown and "**Rename**" not in shown


def test_a_diff_is_coloured_by_line() -> None:
    console = make_console(io.StringIO())
    with console.capture() as captured:
        console.print(diff_renderable("@@ -1 +1 @@\n-old\n+new\n"))
    shown = captured.get()
    assert "\x1b[31m-old" in shown and "\x1b[32m+new" in shown and "\x1b[36m@@" in shown
