"""The questions of detached background runs at the terminal (session/background_questions.py):

- the run (`agentls run --wait-answers`, started by session/background.detached_run) writes each
  question down and waits for its answer instead of refusing it (answer_later);
- `agentls background answer ID` shows a waiting question labelled with its session and asks it
  with the terminal's approval keys (cli/approval.py) or, for ask_user, its line (answer_command);
- `agentls background list` and the chat's prompt say which sessions wait (summaries, notices).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

from agentls.cli.terminal import visible, visible_stream
from agentls.session import background as bg
from agentls.session import background_questions as bq

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


def title_of(record: bg.BackgroundRecord) -> str:
    return " ".join(record.prompt.split())[: bg.TITLE_CHARS]


def answer_later(agent: Any, session_id: str, yes: bool) -> None:
    """In the detached run of a background session: its questions wait for `agentls background
    answer` (with yes, only ask_user's; the other calls are allowed as --yes says) and ask_user is
    offered. Nothing changes for a run that is not a background session's in its worktree, or
    whose worktree holds the data folder (its own bash could write the answers there)."""
    from agentls.session import ApprovalError

    try:
        record = bg.find(session_id)
    except KeyError:
        return
    tree, records = Path(record.worktree).resolve(), bg.records_dir().resolve()
    if record.session_id != session_id or tree != Path(agent.root).resolve():
        return
    if records.is_relative_to(tree) or tree.is_relative_to(records):
        print("agentls: the data folder is in the worktree: no question can wait", file=sys.stderr)
        return

    def approve(*args: Any) -> None:
        try:
            agent.approve(*args)
        except ApprovalError:
            pass  # expired or cancelled meanwhile

    agent.presenter = bq.waiting_presenter(
        record,
        approve,
        passes=lambda q: yes and q.query.tool != "ask_user",
        other=agent.presenter,
    )
    agent.prompt_kind = dataclasses.replace(agent.prompt_kind, attended=True)


def waiting_line(record: bg.BackgroundRecord) -> str | None:
    """`agentls background list`'s line under a waiting session: its question in one line."""
    questions = bq.waiting_questions(record)
    if not questions:
        return None
    more = f" (+{len(questions) - 1} more)" if len(questions) > 1 else ""
    return visible(
        f"    waits: {questions[0].summary()}{more}  "
        f"(agentls background answer {record.session_id})"
    )


def waiting_notices(root: Path, seen: set[str]) -> list[str]:
    """The chat's notices at its prompt: a background session of root's repository waits for an
    answer (each question said once; seen keeps the ids said)."""
    from agentls.workspace.worktree import WorktreeError, repository_root

    try:
        repo = repository_root(root)
    except WorktreeError:
        return []
    notices = []
    for record in bg.load_all():
        if Path(record.repo_root) != repo:
            continue
        questions = bq.waiting_questions(record)
        if questions and not {q.question_id for q in questions} <= seen:
            seen.update(q.question_id for q in questions)
            notices.append(
                visible(
                    f"Background {title_of(record)!r} on {record.branch} waits for an answer: "
                    f"agentls background answer {record.session_id}"
                )
            )
    return notices


async def answer_command(args: argparse.Namespace) -> int:
    """`agentls background answer ID`: each question the session waits on, labelled with it and
    asked as `agentls run` asks at the terminal; the answers go to the run, which goes on."""
    from agentls.cli.approval import ask_approval
    from agentls.cli.printing import (
        read_terminal_key,
        read_terminal_line,
        user_answer,
        user_question,
    )

    record = bg.find(args.session)
    questions = bq.waiting_questions(record)
    if not questions:
        state, _ = bg.state_of(record)
        said = f"is not waiting for an answer (it is {state})"
        if state == "waiting" and record.in_process:
            said = "runs in the editor: answer its question in the agent panel there"
        print(f"agentls: {record.session_id} {said}", file=sys.stderr)
        return EXIT_FAILED
    out = visible_stream(sys.stdout)
    for n, question in enumerate(questions, 1):
        of = f" ({n} of {len(questions)})" if len(questions) > 1 else ""
        whose = " (for a sub-agent)" if question.session_id != record.session_id else ""
        out.write(f"Background {title_of(record)!r} on {record.branch}{whose} asks{of}:\n")
        query = question.query
        given: list[str] = []

        def give(
            decision: str,
            feedback: str | None = None,
            scope: str = "session",
            accepted: dict[Path, str] | None = None,
            question: bq.WaitingQuestion = question,
            given: list[str] = given,
        ) -> None:
            if bq.still_waiting(record, question.question_id):
                bq.give_answer(record, question, decision, feedback, scope, accepted)
                given.append(decision)

        try:
            if query.tool == "ask_user":
                out.write(user_question(query))
                out.flush()
                reply = (await read_terminal_line()).strip()
                out.write("\n" if not sys.stdin.isatty() else "")
                if reply:
                    give("once", user_answer(query, reply))
                else:
                    give("reject")
            else:
                if query.tool == "exit_plan" and sys.stdout.isatty():
                    out.write("\n" + str(query.input.get("plan", "")) + "\n")
                worktree = Path(record.worktree)
                await ask_approval(
                    out, question, worktree, give, read_terminal_key, read_terminal_line
                )
        except asyncio.CancelledError:  # Ctrl+C: nothing answered
            out.write("\nNot answered: it still waits.\n")
            out.flush()
            return EXIT_INTERRUPTED
        if given:
            said = " (allowed)" if given[0] in ("once", "always") else " (refused)"
            said = "" if query.tool == "ask_user" else said
            out.write(f"Answered{said}; the session goes on.\n")
        else:
            out.write("It no longer waits for this question (its run ended or it expired).\n")
        out.flush()
    return EXIT_OK
