"""Sub-agents against a hostile model and repository: plan mode holds for a sub-agent (set before
or while it runs), no task tool for a sub-agent, titles from the model are plain text, tasks over
maxParallel wait and a child's question is answered only there, an untrusted workspace defines no
agent type. Each attack is counted in the security table (tests/security/conftest.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures

SUB_AGENT = "sub-agent escape"


# ---- sub-agents -----------------------------------------------------------------------------


def task(description: str, prompt: str, agent: str | None = None) -> Any:
    args: dict[str, Any] = {"description": description, "prompt": prompt}
    if agent is not None:
        args["agent"] = agent
    return tool_use("task", args)


async def test_plan_mode_holds_for_a_sub_agent_whose_type_can_write(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness(
        {
            "permissions": {"*": "allow"},
            "agents": {"writer": {"description": "writes", "tools": ["write", "bash", "edit"]}},
        }
    )
    api.enqueue(
        reply(task("write it", "write files", agent="writer")),
        reply(
            tool_use("write", {"path": "a.txt", "content": "x"}),
            tool_use("bash", {"command": "touch b.txt"}),
        ),
        reply(text("tried")),
        reply(text("planned")),
    )
    session = await h.agent.new_session()
    await h.agent.set_mode(session.id, "plan")
    await h.agent.prompt(session.id, "plan it")
    child_results = [
        b for b in h.accepted_requests()[2]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    for name in ("a.txt", "b.txt"):
        with security_figures.attempt(SUB_AGENT):
            assert not (h.root / name).exists()
    assert all(r["is_error"] and "plan mode" in r["content"] for r in child_results)


async def test_a_sub_agent_gets_no_task_tool_even_when_its_type_names_it(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness({"agents": {"nest": {"description": "n", "tools": ["task", "read"]}}})
    api.enqueue(
        reply(task("outer", "go", agent="nest")),
        reply(task("inner", "go deeper", agent="nest")),
        reply(text("child done")),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "nest")
    child = h.accepted_requests()[1]
    with security_figures.attempt(SUB_AGENT):
        assert "task" not in {t["name"] for t in child["tools"]}
        [inner] = [
            b
            for b in h.accepted_requests()[2]["messages"][-1]["content"]
            if b["type"] == "tool_result"
        ]
        assert inner["is_error"]
    children = [s for s in await h.store.list_sessions() if s.parent_id is not None]
    assert len(children) == 1


# ---- a sub-agent's session title is the model's words: no control characters ----------------

HOSTILE_TITLES = [
    "\x1b]0;owned\x07 then \x1b[2J",  # terminal escapes: retitle the window, clear the screen
    "line\nfake-session-id  New row",  # a second row in `agentls sessions`
    "right\u202eto-left",  # text direction override
    "lone \ud800 surrogate",  # SQLite refuses it
]


@pytest.mark.parametrize("description", HOSTILE_TITLES)
async def test_a_sub_agents_title_from_the_model_is_plain_text(
    description: str,
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness()
    api.enqueue(reply(task(description, "look around")), reply(text("ok")), reply(text("done")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "go")
    with security_figures.attempt("control characters in a session title"):
        [child] = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
        assert child.title.isprintable() and child.title.strip()


async def test_plan_mode_set_while_a_sub_agent_runs_holds_for_it(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness(
        {
            "permissions": {"write": "allow", "bash": "ask"},
            "agents": {"writer": {"description": "writes", "tools": ["write", "bash"]}},
        }
    )
    api.enqueue(
        reply(task("write it", "write files", agent="writer")),
        reply(tool_use("bash", {"command": "echo hi"})),
        reply(tool_use("write", {"path": "a.txt", "content": "x"})),
        reply(text("tried")),
        reply(text("planned")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    question = await h.wait_for("permission-request")
    # The user switches the session to plan mode while its sub-agent waits on a question.
    await h.agent.set_mode(session.id, "plan")
    h.agent.approve(question.session_id, question.request_id, "once")
    await asyncio.wait_for(turn, 10)
    with security_figures.attempt(SUB_AGENT):
        assert not (h.root / "a.txt").exists()


async def test_tasks_over_max_parallel_wait_and_a_childs_question_is_answered_only_there(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    from agentls.session import ApprovalError

    h = await make_harness(
        {
            "maxParallelTasks": 1,
            "permissions": {"bash": "ask"},
            "agents": {"sh": {"description": "runs", "tools": ["bash"]}},
        }
    )
    api.enqueue(
        reply(task("one", "run it", agent="sh"), task("two", "run it", agent="sh")),
        reply(tool_use("bash", {"command": "echo one"})),
        reply(text("one done")),
        reply(text("two done")),
        reply(text("both done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "two tasks"))
    question = await h.wait_for("permission-request")
    with security_figures.attempt(SUB_AGENT):
        # The second task waits for the first's slot: no session of its own yet.
        children = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
        assert len(children) == 1
        # The child's question is the child's: the parent session does not answer it.
        with pytest.raises(ApprovalError):
            h.agent.approve(session.id, question.request_id, "always")
    h.agent.approve(question.session_id, question.request_id, "reject")
    result = await asyncio.wait_for(turn, 10)
    assert result.finish_reason == "end_turn"
    children = [s for s in await h.store.list_sessions() if s.parent_id == session.id]
    assert len(children) == 2


def test_an_untrusted_workspace_defines_no_agent_type(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    import json

    from agentls.config import load_settings

    root = tmp_path / "repo"
    (root / ".agentls").mkdir(parents=True)
    layer = {
        "agents": {"general": {"description": "x", "tools": ["bash", "write", "edit"]}},
        "maxParallelTasks": 32,
    }
    (root / ".agentls" / "config.json").write_text(json.dumps(layer))
    settings = load_settings(root, {"model": "m"})
    with security_figures.attempt(SUB_AGENT):
        assert not settings.agents and settings.max_parallel_tasks == 4
