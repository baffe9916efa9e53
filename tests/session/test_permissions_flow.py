"""Asks, answers, grants and refusals as the loop lives them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentls.permission.broker import ApprovalError
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory


def last_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


async def read_then_edit(h: Harness, api: MessagesAPIServer, *edits: tuple[str, str]) -> None:
    (h.root / "f.py").write_text("a = 1\nb = 2\n")
    api.enqueue(reply(tool_use("read", {"path": "f.py"})))
    for old, new in edits:
        api.enqueue(reply(tool_use("edit", {"path": "f.py", "old_string": old, "new_string": new})))
    api.enqueue(reply(text("finished")))


async def test_ask_once_applies_after_approval(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    await read_then_edit(h, api, ("a = 1", "a = 10"))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "edit"))
    request = await h.wait_for("permission-request")
    assert request.tool == "edit" and "f.py" in request.title
    assert request.diff and "-a = 1" in request.diff and "+a = 10" in request.diff
    assert (h.root / "f.py").read_text() == "a = 1\nb = 2\n"  # nothing applied before the answer
    h.agent.approve(session.id, request.request_id, "once")
    result = await asyncio.wait_for(turn, 10)
    assert result.finish_reason == "end_turn"
    assert (h.root / "f.py").read_text() == "a = 10\nb = 2\n"
    assert h.of_type("permission-resolved")[0].decision == "once"
    with pytest.raises(ApprovalError, match="already answered"):
        h.agent.approve(session.id, request.request_id, "once")


async def test_reject_with_feedback_reaches_the_model(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    await read_then_edit(h, api, ("a = 1", "a = 10"))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "edit"))
    request = await h.wait_for("permission-request")
    h.agent.approve(session.id, request.request_id, "reject", "call it alpha instead")
    await asyncio.wait_for(turn, 10)
    assert (h.root / "f.py").read_text() == "a = 1\nb = 2\n"
    result = last_results(h.accepted_requests()[2])[0]
    assert result["is_error"] and "call it alpha instead" in result["content"]


async def test_always_grants_this_file_for_the_session_and_persists(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    await read_then_edit(h, api, ("a = 1", "a = 10"), ("b = 2", "b = 20"))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "edit"))
    request = await h.wait_for("permission-request")
    h.agent.approve(session.id, request.request_id, "always")
    await asyncio.wait_for(turn, 10)
    assert len(h.of_type("permission-request")) == 1  # the second edit did not ask
    assert (h.root / "f.py").read_text() == "a = 10\nb = 20\n"
    grants = await h.store.list_grants(session.id)
    assert ("edit", "f.py", "allow") in [g[:3] for g in grants]


async def test_always_for_bash_is_a_two_word_prefix_and_compounds_still_ask(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"approvalTimeoutS": 0.3})
    api.enqueue(
        reply(tool_use("bash", {"command": "echo hi there"})),
        reply(tool_use("bash", {"command": "echo hi again"})),
        reply(tool_use("bash", {"command": "echo hi && touch made.txt"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    first = await h.wait_for("permission-request")
    h.agent.approve(session.id, first.request_id, "always")
    second = await h.wait_for("permission-request", 2)
    assert second.input["command"] == "echo hi && touch made.txt"
    # Left unanswered: the ask times out and the call is rejected.
    result = await asyncio.wait_for(turn, 10)
    assert result.finish_reason == "end_turn"
    assert not (h.root / "made.txt").exists()
    assert h.of_type("permission-resolved")[-1].decision == "timeout"
    with pytest.raises(ApprovalError, match="expired"):
        h.agent.approve(session.id, second.request_id, "once")
    bodies = h.accepted_requests()
    assert "hi again" in last_results(bodies[2])[0]["content"]
    timed_out = last_results(bodies[3])[0]
    assert timed_out["is_error"] and "timed out" in timed_out["content"]


async def test_deny_rule_is_an_error_result_without_asking(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(
        {
            "permissions": [
                {"tool": "bash", "pattern": "rm", "action": "deny"},
                {"tool": "bash", "pattern": "echo", "action": "allow"},
            ]
        }
    )
    api.enqueue(reply(tool_use("bash", {"command": "echo ok; rm -rf x"})), reply(text("done")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "go")
    assert not h.of_type("permission-request")
    result = last_results(h.accepted_requests()[1])[0]
    assert result["is_error"] and "denied" in result["content"]


async def test_staleness_check_comes_before_the_ask(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "f.py").write_text("a = 1\n")
    api.enqueue(
        reply(tool_use("edit", {"path": "f.py", "old_string": "a = 1", "new_string": "a = 2"})),
        reply(text("ok")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "edit without reading")
    assert not h.of_type("permission-request")
    result = last_results(h.accepted_requests()[1])[0]
    assert result["is_error"] and "read" in result["content"].lower()
    assert (h.root / "f.py").read_text() == "a = 1\n"


async def test_outside_paths_refused_unless_a_rule_names_them(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Any
) -> None:
    outside = tmp_path / "shared"
    outside.mkdir()
    (outside / "notes.txt").write_text("shared notes\n")
    h = await make_harness({"permissions": {"*": "allow"}})
    (h.root / "link").symlink_to(outside)
    api.enqueue(
        reply(
            tool_use("read", {"path": str(outside / "notes.txt")}),
            tool_use("read", {"path": "../shared/notes.txt"}),
            tool_use("read", {"path": "link/notes.txt"}),
        ),
        reply(text("ok")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "read outside")
    results = last_results(h.accepted_requests()[1])
    assert all(r["is_error"] and "outside the workspace" in r["content"] for r in results)

    h2 = await make_harness(
        {"permissions": [{"tool": "read", "pattern": str(outside), "action": "allow"}]}
    )
    api.enqueue(reply(tool_use("read", {"path": str(outside / "notes.txt")})), reply(text("ok")))
    session2 = await h2.agent.new_session()
    await h2.agent.prompt(session2.id, "read outside")
    result = last_results(api.requests[-1].body)[0]
    assert not result.get("is_error") and "shared notes" in result["content"]


# ---- "always" is literal, shown, and scoped ----------------------------------------------


async def ask_and_answer(
    h: Harness, session_id: str, decision: str, scope: str = "session", count: int = 1
) -> Any:
    request = await h.wait_for("permission-request", count)
    h.agent.approve(session_id, request.request_id, decision, scope=scope)
    return request


async def test_the_question_says_what_always_allows(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    (h.root / "f.py").write_text("a = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "f.py"})),
        reply(tool_use("edit", {"path": "f.py", "old_string": "a = 1", "new_string": "a = 2"})),
        reply(tool_use("bash", {"command": "git status --porcelain"})),
        reply(tool_use("bash", {"command": "bash -c 'echo hi'"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    edit = await ask_and_answer(h, session.id, "once")
    status = await ask_and_answer(h, session.id, "once", count=2)
    shell = await ask_and_answer(h, session.id, "once", count=3)
    await asyncio.wait_for(turn, 10)
    assert edit.always == "Always allow edits of f.py"
    assert status.always == "Always allow `git status` commands"
    assert shell.always == "Always allow exactly `bash -c 'echo hi'`"
    assert edit.wire()["always"] == "Always allow edits of f.py"


async def test_always_where_it_is_not_offered_counts_once_and_says_so(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"approvalTimeoutS": 0.3})
    # A command word that is a variable: no one can say what "always" would cover.
    line = 'CMD=echo; "$CMD" hi'
    api.enqueue(
        reply(tool_use("bash", {"command": line})),
        reply(tool_use("bash", {"command": line})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    request = await ask_and_answer(h, session.id, "always")
    assert request.always is None and "always" not in request.wire()
    again = await h.wait_for("permission-request", 2)  # nothing was granted: it asks again
    assert again.always is None
    await asyncio.wait_for(turn, 10)
    assert h.of_type("permission-resolved")[0].decision == "once"
    first = last_results(h.accepted_requests()[1])[0]
    assert not first.get("is_error") and '"always" is not offered for this call' in first["content"]
    assert await h.store.list_grants(session.id) == []
    assert await h.store.list_project_grants(str(h.agent.root)) == []


async def test_project_scope_is_kept_for_later_agents_of_the_root(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    api.enqueue(reply(tool_use("bash", {"command": "git status --porcelain"})), reply(text("ok")))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    await ask_and_answer(h, session.id, "always", scope="project")
    await asyncio.wait_for(turn, 10)
    assert await h.store.list_grants(session.id) == []  # not a session grant
    [grant] = await h.store.list_project_grants(str(h.agent.root))
    assert (grant.tool, grant.pattern, grant.exact) == ("bash", "git status", False)
    assert grant.label == "Always allow `git status` commands"

    # Another Agent of the same root (another process, a restart): a new session does not ask.
    later = await make_harness()
    api.enqueue(reply(tool_use("bash", {"command": "git status"})), reply(text("ok")))
    fresh = await later.agent.new_session()
    await later.agent.prompt(fresh.id, "go")
    assert not later.of_type("permission-request")
    # A configured deny still wins over the grant: a grant only ever answers a question.
    denied = await make_harness({"permissions": {"bash": {"git status": "deny"}}})
    api.enqueue(reply(tool_use("bash", {"command": "git status"})), reply(text("ok")))
    other = await denied.agent.new_session()
    await denied.agent.prompt(other.id, "go")
    assert not denied.of_type("permission-request")
    result = last_results(api.requests[-1].body)[0]
    assert result["is_error"] and "denied" in result["content"]


async def test_a_session_grant_stores_exactly_the_shown_rules(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"approvalTimeoutS": 0.3})
    (h.root / "src").mkdir()
    api.enqueue(
        reply(tool_use("write", {"path": "src/*.py", "content": "x\n"})),
        reply(tool_use("write", {"path": "src/*.py", "content": "y\n"})),
        reply(tool_use("write", {"path": "src/app.py", "content": "z\n"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "go"))
    await ask_and_answer(h, session.id, "always")
    second = await h.wait_for("permission-request", 2)
    await asyncio.wait_for(turn, 10)
    assert second.input["path"] == "src/app.py"  # the glob-looking name granted only itself
    assert (h.root / "src" / "*.py").read_text() == "y\n"
    assert not (h.root / "src" / "app.py").exists()
    assert await h.store.list_grants(session.id) == [("write", "src/*.py", "allow", True)]
    # Loaded again (a new Agent), the grant is still the literal name.
    again = await make_harness()
    state = await again.agent.session(session.id)
    assert [(r.pattern, r.exact) for r in state.grants] == [("src/*.py", True)]


async def test_a_grant_from_before_the_exact_flag_keeps_working(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness()
    session = await h.agent.new_session()
    # As an older agentls stored it: a prefix grant, no exact flag.
    await h.store.add_grant(session.id, "bash", "echo", "allow")
    reloaded = await make_harness()
    api.enqueue(reply(tool_use("bash", {"command": "echo kept"})), reply(text("ok")))
    await reloaded.agent.prompt(session.id, "go")
    assert not reloaded.of_type("permission-request")
    assert "kept" in last_results(api.requests[-1].body)[0]["content"]
