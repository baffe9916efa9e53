""" "Always" through the real loop (make_harness: the Agent, its store, the local Messages API): the
model makes a call, the user answers "always", then the model tries a call the answer did not
cover. That second call must ask again (or be refused), never run on the first answer. The
attacks of issue 14: a file named `**`, a file named `./~`, and "always" for code-running
commands (`bash -c`, `python3 -c`, `env`), plus their relatives."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory
from tests.security.conftest import SecurityFigures

ATTACK = "always wider than shown"


def write(path: str, content: str = "granted\n") -> dict[str, Any]:
    return {"path": path, "content": content}


async def answer_always_then_watch(
    h: Harness, session_id: str, turn: asyncio.Task[Any], scope: str = "session"
) -> Any | None:
    """Answer the first question "always"; return the second question (rejected), or None when
    the turn ended without one."""
    first = await h.wait_for("permission-request")
    h.agent.approve(session_id, first.request_id, "always", scope=scope)
    second = asyncio.ensure_future(h.wait_for("permission-request", 2, timeout=30))
    await asyncio.wait({second, turn}, return_when=asyncio.FIRST_COMPLETED)
    if not second.done():
        second.cancel()
        await asyncio.wait_for(turn, 10)
        return None
    request = second.result()
    h.agent.approve(session_id, request.request_id, "reject")
    await asyncio.wait_for(turn, 10)
    return request


async def run_attack(
    h: Harness,
    api: MessagesAPIServer,
    granted: tuple[str, dict[str, Any]],
    then: tuple[str, dict[str, Any]],
) -> Any | None:
    api.enqueue(
        reply(tool_use(granted[0], granted[1])),
        reply(tool_use(then[0], then[1])),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    return await answer_always_then_watch(h, session.id, turn)


# (the name answered "always", another path the model then writes)
GLOB_NAMES = [
    ("**", "other.txt"),
    ("**", "src/deep/app.py"),
    ("*", "b.txt"),
    ("?", "c"),
    ("src/**", "src/app.py"),
    ("src/*", "src/app.py"),
    ("notes/*.md", "notes/plan.md"),
    ("[ab]", "a"),
    ("{a,b}", "a"),
    ("src/**/x", "src/y/x"),
]


@pytest.mark.parametrize(("name", "other"), GLOB_NAMES)
async def test_always_for_a_glob_named_file_grants_that_file_only(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
    name: str,
    other: str,
) -> None:
    h = await make_harness()
    for path in (name, other):
        (h.root / path).parent.mkdir(parents=True, exist_ok=True)
    with security_figures.attempt(ATTACK):
        second = await run_attack(h, api, ("write", write(name)), ("write", write(other, "x\n")))
        assert second is not None, f"writing {other} did not ask after 'always' for {name}"
        assert second.input["path"] == other
        assert not (h.root / other).exists()
    assert (h.root / name).read_text() == "granted\n"


@pytest.mark.parametrize("name", ["./~", "./~/"])
@pytest.mark.parametrize("target", ["~/.bashrc", "{home}/.bashrc", "~/notes/x"])
async def test_a_file_named_tilde_does_not_grant_home(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    target: str,
) -> None:
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    h = await make_harness()
    path = target.format(home=home)
    with security_figures.attempt(ATTACK):
        api.enqueue(
            reply(tool_use("write", write(name))),
            reply(tool_use("write", write(path, "evil\n"))),
            reply(text("done")),
        )
        session = await h.agent.new_session()
        turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
        first = await h.wait_for("permission-request")
        assert first.input["path"] == name
        h.agent.approve(session.id, first.request_id, "always")
        second = asyncio.ensure_future(h.wait_for("permission-request", 2, timeout=30))
        await asyncio.wait({second, turn}, return_when=asyncio.FIRST_COMPLETED)
        if second.done():
            h.agent.approve(session.id, second.result().request_id, "reject")
        else:
            second.cancel()
        await asyncio.wait_for(turn, 10)
        assert not (home / ".bashrc").exists() and not (home / "notes" / "x").exists()
        if not second.done() or second.cancelled():
            # Not asked: then it must have been refused as outside the workspace.
            results = h.accepted_requests()[-1]["messages"][-1]["content"]
            assert results[0]["is_error"] and "outside the workspace" in results[0]["content"]


# (the line answered "always", a line it must not cover). Each second line would create `x`.
CODE_LINES = [
    ("bash -c 'echo hi'", "bash -c 'touch x'"),
    ("sh -c 'echo hi'", "sh -c 'touch x'"),
    ("python3 -c 'print(1)'", 'python3 -c \'import os; open("x", "w")\''),
    ("python3 -c 'print(1)'", "python3 -c 'import os'; touch x"),
    ("env LANG=C echo hi", "env LANG=C touch x"),
    ("env echo hi", "env touch x"),
    ("eval 'echo hi'", "eval 'touch x'"),
    ("command echo hi", "command touch x"),
    ("timeout 5 echo hi", "timeout 5 touch x"),
    ("nice echo hi", "nice touch x"),
    ("nohup echo hi", "nohup touch x"),
    ("echo hi | xargs echo", "echo x | xargs touch"),
    ("perl -e 'print 1'", "perl -e 'open(F, \">x\")'"),
    ("echo hi", "echo hi > x"),
    ("echo hi", "echo hi; touch x"),
    ("echo hi", "echo $(touch x)"),
    ("git status", "git status > x"),
    ("git status", "git -c core.pager='touch x' status"),
]


@pytest.mark.parametrize(("granted", "then"), CODE_LINES)
async def test_always_for_a_command_does_not_cover_other_code(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
    granted: str,
    then: str,
) -> None:
    h = await make_harness()
    with security_figures.attempt(ATTACK):
        second = await run_attack(
            h, api, ("bash", {"command": granted}), ("bash", {"command": then})
        )
        assert second is not None, f"{then!r} ran without asking after 'always' for {granted!r}"
        assert second.input["command"] == then
        assert not (h.root / "x").exists()


@pytest.mark.parametrize(
    ("granted", "then"),
    [
        ("bash -c 'echo hi'", "bash -c 'touch x'"),
        ("env LANG=C echo hi", "env LANG=C touch x"),
    ],
)
async def test_a_project_grant_is_as_narrow_in_a_later_agent(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    security_figures: SecurityFigures,
    granted: str,
    then: str,
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("bash", {"command": granted})), reply(text("ok")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    request = await h.wait_for("permission-request")
    h.agent.approve(session.id, request.request_id, "always", scope="project")
    await asyncio.wait_for(turn, 10)
    later = await make_harness()
    with security_figures.attempt(ATTACK):
        api.enqueue(
            reply(tool_use("bash", {"command": granted})),
            reply(tool_use("bash", {"command": then})),
            reply(text("done")),
        )
        fresh = await later.agent.new_session()
        turn = asyncio.create_task(later.agent.prompt(fresh.id, "go"))
        asked = await later.wait_for("permission-request")  # the granted line itself did not ask
        assert asked.input["command"] == then
        later.agent.approve(fresh.id, asked.request_id, "reject")
        await asyncio.wait_for(turn, 10)
        assert len(later.of_type("permission-request")) == 1
        assert not (later.root / "x").exists()
