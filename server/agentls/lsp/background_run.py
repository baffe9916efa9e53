"""Background sessions run inside the LSP server (agent/prompt `background: true`).

Where the CLI starts a detached `agentls run` that refuses every question as unattended, the
server opens a second Agent on the session's worktree (its settings loaded from there, the
repository's trust carried over by session/background.start) and runs the turn as a task of its
own. Its events go to the editor as the main Agent's do (agent/event, carrying its session id),
its questions through the same presenter (a permission-request the panel shows, labelled with the
session), and agent/approve finds it by session id in `ls.background_agents`. While a question
waits the session is "waiting" (background.mark_waiting); at the end the turn's result line goes to
the record's log, as the detached run writes it, so its state reads "done" or "failed". A crash
of the server leaves no result line: the session reads "failed ... interrupted" and resumes with
`agentls background resume`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentls.config import load_settings
from agentls.lsp.agent_server import AgentServer
from agentls.session import Agent, Question, QuestionPresenter
from agentls.session import background as bg

log = logging.getLogger(__name__)


def launcher(
    ls: AgentServer, overrides: dict[str, Any] | None
) -> Callable[[bg.BackgroundRecord], int]:
    """bg.start's launch: the run as a task of this server; its pid is the server's."""

    def launch(record: bg.BackgroundRecord) -> int:
        record.in_process = True
        ls.spawn(run(ls, record, overrides))
        return os.getpid()

    return launch


async def run(
    ls: AgentServer, record: bg.BackgroundRecord, overrides: dict[str, Any] | None
) -> None:
    """One turn of record's session in its worktree; its result line written to the log."""
    line: dict[str, Any]
    try:
        root = Path(record.worktree)
        settings = await asyncio.to_thread(load_settings, root, overrides)
        agent = await Agent.open(
            settings=settings,
            root=root,
            presenter=_presenter(ls, record),
            front_end="editor",
            watch_instructions=False,
        )
    except Exception as exc:  # noqa: BLE001 - said in its result line
        log.exception("background session %s could not start", record.session_id)
        _write(record, _failed(record, f"it could not start: {exc}"))
        return
    ls.background_agents[record.session_id] = agent

    def relay(event: Any) -> None:
        # A sub-agent's session asks too: agent/approve with its id finds this Agent.
        ls.background_agents.setdefault(event.session_id, agent)
        ls.relay(event)

    unsubscribe = agent.subscribe(relay)
    try:
        result = await agent.prompt(record.session_id, record.prompt)
        line = result.wire()  # the result line a detached run's `agentls run --json` writes
        if result.finish_reason not in bg.DONE_REASONS and "error" not in line:
            line["error"] = {"message": result.error or ""}
    except asyncio.CancelledError:
        # The server is shutting down: no result line, so it reads "interrupted" (resumable).
        raise
    except Exception as exc:  # noqa: BLE001 - said in its result line
        log.exception("background session %s failed", record.session_id)
        line = _failed(record, str(exc))
    finally:
        bg.mark_waiting(record, False)
        unsubscribe()
        for session_id, running in list(ls.background_agents.items()):
            if running is agent:
                del ls.background_agents[session_id]
        await agent.aclose()
    _write(record, line)


def _failed(record: bg.BackgroundRecord, message: str) -> dict[str, Any]:
    return {
        "type": "result",
        "sessionId": record.session_id,
        "finishReason": "error",
        "error": {"message": message},
    }


def _write(record: bg.BackgroundRecord, line: dict[str, Any]) -> None:
    with open(record.log, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def _presenter(ls: AgentServer, record: bg.BackgroundRecord) -> QuestionPresenter:
    """The server's presenter, the session marked waiting while its question is shown."""

    open_questions: set[str] = set()  # several may wait at once (calls run in parallel)

    @contextmanager
    def presenting(question: Question) -> Iterator[None]:
        open_questions.add(question.request_id)
        bg.mark_waiting(record, True)
        try:
            if ls.presenter is None:
                yield
            else:
                with ls.presenter(question):
                    yield
        finally:
            open_questions.discard(question.request_id)
            bg.mark_waiting(record, bool(open_questions))

    return presenting
