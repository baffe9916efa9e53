"""The approval question of `agentls run` as a person at a terminal sees and answers it (a real
process at a pseudo-terminal, the real SDK against the local Messages API): the diff in colour
(plain with NO_COLOR), [p]ick hunks keeping exactly the hunks answered y, [e] a rejection with a
note the model receives, where a command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.terminal_support import respond_at_terminal
from tests.cli.test_cli import workspace  # noqa: F401 - fixture

BEFORE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
PROPOSED = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"
QUESTION = b"[n]o: "
HUNK_QUESTION = b"Keep this hunk? [y]es / [n]o: "


def answer_in_turn(
    args: list[str], environment: dict[str, str], steps: list[tuple[bytes, bytes]]
) -> tuple[int, str]:
    """Run `agentls ARGS`; for each (prompt, keys) in order, type `keys` once `prompt` is on
    screen after the previous step's prompt (a question asked again is answered again). Returns
    the exit code and what the terminal showed; a hang fails after a minute."""
    todo = list(steps)
    seen_up_to = 0

    def respond(shown: bytes) -> bytes | None:
        nonlocal seen_up_to
        if todo and (at := shown.find(todo[0][0], seen_up_to)) >= 0:
            prompt, keys = todo.pop(0)
            seen_up_to = at + len(prompt)
            return keys
        return None

    return respond_at_terminal(args, environment, respond)


def change_a_and_e(
    api: MessagesAPIServer,
    environment: dict[str, str],
    workspace: Path,  # noqa: F811
    steps: list[tuple[bytes, bytes]],
) -> tuple[int, str]:
    """`agentls run` whose model proposes one edit of m.py in two hunks (a and e), its question
    answered by `steps` (answer_in_turn)."""
    (workspace / "m.py").write_text(BEFORE)
    api.enqueue(
        reply(tool_use("read", {"path": "m.py"})),
        reply(tool_use("edit", {"path": "m.py", "old_string": BEFORE, "new_string": PROPOSED})),
        reply(text("ok")),
    )
    return answer_in_turn(["run", "--cwd", str(workspace), "change a and e"], environment, steps)


def tool_result(body: dict[str, Any]) -> dict[str, Any]:
    return next(b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result")


def plain(environment: dict[str, str]) -> dict[str, str]:
    return {**environment, "NO_COLOR": "1"}


def test_picking_hunks_keeps_exactly_the_hunks_answered_yes(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    code, shown = change_a_and_e(
        api, plain(env), workspace, [(QUESTION, b"p"), (HUNK_QUESTION, b"n"), (HUNK_QUESTION, b"y")]
    )
    assert code == 0, shown
    assert "[p]ick hunks (of 2)" in shown
    assert "Hunk 1 of 2: m.py, line 1\n@@ -1 +1 @@\n-a = 1\n+a = 10\n" in shown
    assert "Hunk 2 of 2: m.py, line 5\n@@ -5 +5 @@\n-e = 5\n+e = 50\n" in shown
    assert "Kept 1 of 2 hunks." in shown
    assert (workspace / "m.py").read_text() == "a = 1\nb = 2\nc = 3\nd = 4\ne = 50\n"
    result = tool_result(api.requests[-1].body)
    assert not result.get("is_error"), result
    assert "as the user accepted it" in str(result["content"])


def test_picking_no_hunk_is_a_rejection(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    code, shown = change_a_and_e(
        api, plain(env), workspace, [(QUESTION, b"p"), (HUNK_QUESTION, b"n"), (HUNK_QUESTION, b"n")]
    )
    assert code == 0, shown
    assert (workspace / "m.py").read_text() == BEFORE
    assert tool_result(api.requests[-1].body).get("is_error")


@pytest.mark.parametrize("no_color", [False, True])
def test_the_diff_is_in_colour_at_a_terminal_and_plain_with_no_color(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
    no_color: bool,
) -> None:
    environment = {k: v for k, v in env.items() if k not in ("NO_COLOR", "TERM")}
    environment["TERM"] = "xterm-256color"
    if no_color:
        environment["NO_COLOR"] = "1"
    code, shown = change_a_and_e(api, environment, workspace, [(QUESTION, b"n")])
    assert code == 0, shown
    question = shown[: shown.index("[n]o: ")]
    if no_color:
        assert "\x1b" not in question
        assert "\n-a = 1\n+a = 10\n" in question
    else:
        assert "\x1b[31m-a = 1" in question  # red
        assert "\x1b[32m+a = 10" in question  # green
    assert (workspace / "m.py").read_text() == BEFORE


def test_e_rejects_with_the_note_the_model_receives(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    code, shown = change_a_and_e(
        api,
        plain(env),
        workspace,
        [(QUESTION, b"e"), (b"Note for the agent (Enter to send): ", b"keep a as it is\n")],
    )
    assert code == 0, shown
    assert (workspace / "m.py").read_text() == BEFORE
    result = tool_result(api.requests[-1].body)
    assert result.get("is_error") and "keep a as it is" in str(result["content"])


def test_a_command_question_says_whether_it_runs_sandboxed(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    api.enqueue(reply(tool_use("bash", {"command": "touch made"})), reply(text("ok")))
    code, shown = answer_in_turn(
        ["run", "--cwd", str(workspace), "touch"], plain(env), [(QUESTION, b"n")]
    )
    assert code == 0, shown
    assert "Sandboxed: it can write only" in shown or "Not sandboxed: it runs" in shown
    assert "Allow bash `touch made`? [y]es once" in shown
    assert "[p]ick hunks" not in shown  # not a change to files
    assert not (workspace / "made").exists()


def test_a_plan_is_shown_and_sent_back_with_a_note(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    plan = "1. Read m.py\n2. Change a"
    api.enqueue(reply(tool_use("exit_plan", {"plan": plan})), reply(text("ok")))
    code, shown = answer_in_turn(
        ["run", "--plan", "--cwd", str(workspace), "plan it"],
        plain(env),
        [(b"keep planning: ", b"e"), (b"Note for the agent (Enter to send): ", b"also b\n")],
    )
    assert code == 0, shown
    assert plan in shown
    result = tool_result(api.requests[-1].body)
    assert "also b" in str(result["content"])
