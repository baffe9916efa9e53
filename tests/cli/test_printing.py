"""What `agentls run` asks at the terminal for ask_user: the question with its choices
numbered, a number or the user's own words as the answer (through a pseudo-terminal, a real
process); without a terminal the question is refused, the model told no one can be asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.terminal_support import answer_at_terminal
from tests.cli.test_cli import agentls, workspace  # noqa: F401 - fixtures

QUESTION = {"question": "Which name?", "choices": ["alpha", "beta"]}


def answer_in_terminal(args: list[str], environment: dict[str, str], reply_with: str) -> str:
    """`agentls run` at a pseudo-terminal; types `reply_with` once the question's prompt is on
    screen. Returns what the terminal showed."""
    code, shown = answer_at_terminal(
        args, environment, b"empty to skip): ", reply_with.encode() + b"\n"
    )
    assert code == 0, shown
    return shown


def tool_result(body: dict[str, Any]) -> dict[str, Any]:
    return next(b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result")


def test_a_choice_is_picked_by_its_number_at_the_terminal(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    api.enqueue(reply(tool_use("ask_user", QUESTION)), reply(text("ok")))
    shown = answer_in_terminal(["run", "--cwd", str(workspace), "name it"], env, "2")
    assert "The agent asks: Which name?\n  1. alpha\n  2. beta\n" in shown
    assert tool_result(api.requests[1].body)["content"] == "The user answered: beta"


def test_own_words_are_the_answer_even_with_yes(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    api.enqueue(reply(tool_use("ask_user", QUESTION)), reply(text("ok")))
    answer_in_terminal(["run", "--yes", "--cwd", str(workspace), "name it"], env, "gamma, please")
    assert tool_result(api.requests[1].body)["content"] == "The user answered: gamma, please"


def test_without_a_terminal_the_question_is_refused_and_shown(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    api.enqueue(reply(tool_use("ask_user", QUESTION)), reply(text("ok")))
    proc = agentls("run", "--yes", "--cwd", str(workspace), "name it", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "The agent asked (no terminal to answer): Which name?" in proc.stderr
    result = tool_result(api.requests[1].body)
    assert result["is_error"] and "the user is not at a terminal" in result["content"]
    assert "Their feedback" not in result["content"]


def test_an_mcp_tools_progress_is_shown_under_its_title_and_a_commands_lines_are_not() -> None:
    import io

    from agentls.cli.printing import TerminalPrinter
    from agentls.events import ProgressEvent, ToolCallEvent, ToolResultEvent

    out = io.StringIO()
    printer = TerminalPrinter(out)
    for call, tool, title in (("c1", "mcp__srv__slow", "srv: slow"), ("c2", "bash", "ls")):
        printer(ToolCallEvent(session_id="s", call_id=call, tool=tool, input={}, title=title))
        printer(ProgressEvent(session_id="s", call_id=call, message="1/3"))
        printer(
            ToolResultEvent(session_id="s", call_id=call, tool=tool, output="ok", is_error=False)
        )
    assert out.getvalue().splitlines() == ["[..] srv: slow: 1/3", "[+] srv: slow: ok", "[+] ls: ok"]
