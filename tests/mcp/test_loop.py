"""MCP tools through the loop, against the local Messages API: listed in the request after the
built-ins, called after the question, their results reaching the model."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory
from tests.mcp.conftest import HttpServer, alive, pids, stdio_entry
from tests.waiting import until

BUILT_INS = ["read", "write", "edit", "glob", "grep", "list", "bash"]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body["tools"]]


def last_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    content = result["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


async def run_turn(h: Harness, prompt: str = "go", approve: str | None = None) -> Any:
    """A turn; every question answered `approve` (None: no question expected)."""
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, prompt))
    asked = 0
    while not turn.done():
        requests = h.of_type("permission-request")
        if len(requests) > asked:
            assert approve is not None, f"unexpected question: {requests[asked].title}"
            h.agent.approve(session.id, requests[asked].request_id, approve)
            asked += 1
        await asyncio.sleep(0.01)
    return await turn


async def test_tools_are_listed_after_the_built_ins_and_a_call_reaches_the_model(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness({"mcpServers": {"test": stdio_entry(), "alpha": stdio_entry()}})
    api.enqueue(reply(tool_use("mcp__test__echo", {"text": "hello"})), reply(text("done")))
    result = await run_turn(h, approve="once")
    assert result.finish_reason == "end_turn"
    first, second = h.accepted_requests()
    names = tool_names(first)
    assert names[: len(BUILT_INS)] == BUILT_INS
    at = next(i for i, n in enumerate(names) if n.startswith("mcp__"))
    mcp_names = names[at:]  # after every built-in
    assert all(n.startswith("mcp__") for n in mcp_names)
    assert mcp_names == sorted(mcp_names)  # a stable order: prompt caching keeps working
    assert "mcp__test__echo" in mcp_names and "mcp__alpha__add" in mcp_names
    echo = next(t for t in first["tools"] if t["name"] == "mcp__test__echo")
    assert echo["input_schema"]["properties"]["text"]["type"] == "string"
    (answer,) = last_results(second)
    assert result_text(answer) == "echo: hello" and not answer.get("is_error")
    (question,) = h.of_type("permission-request")
    assert question.tool == "mcp__test__echo"
    assert "read" in question.title  # the server's readOnlyHint is shown (and still asked)


async def test_rules_by_server_and_by_tool(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    permissions = {"mcp__test": "allow", "mcp__test__add": "deny"}
    h = await make_harness({"mcpServers": {"test": stdio_entry()}, "permissions": permissions})
    api.enqueue(
        reply(
            tool_use("mcp__test__echo", {"text": "x"}), tool_use("mcp__test__add", {"a": 1, "b": 2})
        ),
        reply(text("done")),
    )
    await run_turn(h)  # no question: one allowed by the server's rule, one denied by its own
    echo, add = last_results(h.accepted_requests()[1])
    assert result_text(echo) == "echo: x"
    assert add["is_error"] and "Permission denied" in result_text(add)


async def test_a_server_wildcard_rule_denies_every_tool_of_it(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    settings = {"mcpServers": {"test": stdio_entry()}, "permissions": {"mcp__test__*": "deny"}}
    h = await make_harness(settings)
    api.enqueue(reply(tool_use("mcp__test__echo", {"text": "x"})), reply(text("done")))
    await run_turn(h)
    (echo,) = last_results(h.accepted_requests()[1])
    assert echo["is_error"] and "Permission denied" in result_text(echo)


async def test_env_variables_come_from_the_environment(
    make_harness: HarnessFactory, api: MessagesAPIServer, monkeypatch: Any
) -> None:
    monkeypatch.setenv("H5_TEST_TOKEN", "tok-123")
    entry = stdio_entry(MCP_TEST_SECRET="${H5_TEST_TOKEN}")
    h = await make_harness({"mcpServers": {"s": entry}, "permissions": {"mcp__s": "allow"}})
    api.enqueue(reply(tool_use("mcp__s__secret")), reply(text("done")))
    await run_turn(h)
    (answer,) = last_results(h.accepted_requests()[1])
    assert result_text(answer) == "tok-123"


async def test_a_failing_server_is_named_with_its_stderr_and_the_session_goes_on(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    servers = {"broken": stdio_entry(MCP_TEST_FAIL="1"), "test": stdio_entry()}
    h = await make_harness({"mcpServers": servers})
    api.enqueue(reply(text("fine")), reply(text("again")))
    result = await run_turn(h)
    assert result.finish_reason == "end_turn" and result.text == "fine"
    (error,) = h.of_type("error")
    assert "'broken'" in error.message
    assert "missing configuration FOO" in error.message and "giving up" in error.message
    names = tool_names(h.accepted_requests()[0])
    assert "mcp__test__echo" in names
    assert not [n for n in names if n.startswith("mcp__broken")]
    await run_turn(h)  # said once, not at every turn
    assert len(h.of_type("error")) == 1


async def test_a_server_that_dies_in_a_call_is_restarted_once_and_said(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(
        {"mcpServers": {"test": stdio_entry()}, "permissions": {"mcp__test": "allow"}}
    )
    api.enqueue(
        reply(tool_use("mcp__test__die")),
        reply(tool_use("mcp__test__echo", {"text": "back"})),
        reply(tool_use("mcp__test__die")),
        reply(tool_use("mcp__test__echo", {"text": "again"})),
        reply(text("done")),
    )
    result = await run_turn(h)
    assert result.finish_reason == "end_turn"
    bodies = h.accepted_requests()
    (died,) = last_results(bodies[1])
    assert died["is_error"]
    assert "'test'" in result_text(died) and "dying on purpose" in result_text(died)
    assert "restarted" in result_text(died)
    assert result_text(last_results(bodies[2])[0]) == "echo: back"
    # The second death in the same turn: no second restart.
    (second,) = last_results(bodies[3])
    assert second["is_error"] and "stays stopped" in result_text(second)
    (stopped,) = last_results(bodies[4])
    assert stopped["is_error"]
    # Its tools are gone from the next step's request.
    assert not [n for n in tool_names(bodies[4]) if n.startswith("mcp__test")]


async def test_list_changed_is_honoured_before_the_next_step(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(
        {"mcpServers": {"test": stdio_entry()}, "permissions": {"mcp__test": "allow"}}
    )
    api.enqueue(
        reply(tool_use("mcp__test__grow")),
        reply(tool_use("mcp__test__extra")),
        reply(text("done")),
    )
    await run_turn(h)
    first, second, third = h.accepted_requests()
    assert "mcp__test__extra" not in tool_names(first)
    assert "mcp__test__extra" in tool_names(second)
    assert result_text(last_results(third)[0]) == "extra ran"


async def test_images_resources_and_long_output(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    h = await make_harness(
        {"mcpServers": {"test": stdio_entry()}, "permissions": {"mcp__test": "allow"}}
    )
    api.enqueue(
        reply(
            tool_use("mcp__test__doc"), tool_use("mcp__test__big"), tool_use("mcp__test__picture")
        ),
        reply(text("done")),
    )
    result = await run_turn(h)
    doc, big, picture = last_results(h.accepted_requests()[1])
    assert "file:///notes.txt" in result_text(doc) and "the notes" in result_text(doc)
    assert "omitted" in result_text(big) and len(result_text(big)) < 70_000
    assert "line 0\n" in result_text(big) and "line 19999" in result_text(big)
    # All of it is kept in a file of the session's, named in the result.
    saved = re.search(r"All of it is saved in (\S+): read it", result_text(big))
    assert saved is not None, result_text(big)
    whole = Path(saved.group(1)).read_text()
    assert all(f"line {n}\n" in whole for n in (0, 9999, 19998))
    assert "image/png" in result_text(picture)
    (image,) = [b for b in picture["content"] if b["type"] == "image"]
    assert image["source"]["media_type"] == "image/png" and image["source"]["data"]
    stored = await h.store.load_messages(result.session_id)  # kept for the next requests
    parts = [p for m in stored for p in m.parts if getattr(p, "images", None)]
    assert [i.media_type for p in parts for i in p.images or []] == ["image/png"]


async def test_servers_and_what_they_started_end_with_the_agent(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    entry = stdio_entry(MCP_TEST_PIDFILE=str(pidfile))
    h = await make_harness({"mcpServers": {"test": entry}, "permissions": {"mcp__test": "allow"}})
    api.enqueue(reply(tool_use("mcp__test__spawn")), reply(text("done")))
    await run_turn(h)
    started = pids(pidfile)
    assert len(started) == 2 and all(alive(p) for p in started)  # the server and its sleep
    await h.agent.aclose()
    await until(lambda: not any(alive(p) for p in started), "the server and its child ended")


async def test_http_server_on_loopback(
    make_harness: HarnessFactory, api: MessagesAPIServer, http_server: str, monkeypatch: Any
) -> None:
    monkeypatch.setenv("H5_HTTP_TOKEN", "t0k")
    entry = {
        "type": "http",
        "url": http_server,
        "headers": {"Authorization": "Bearer ${H5_HTTP_TOKEN}"},
    }
    h = await make_harness({"mcpServers": {"web": entry}})
    api.enqueue(
        reply(tool_use("mcp__web__add", {"a": 2, "b": 40}), tool_use("mcp__web__auth")),
        reply(text("done")),
    )
    await run_turn(h, approve="once")
    assert "mcp__web__add" in tool_names(h.accepted_requests()[0])
    answer, auth = last_results(h.accepted_requests()[1])
    assert result_text(answer) == "42"
    assert result_text(auth) == "Bearer t0k"  # the header, its ${VAR} from the environment


async def test_a_cancel_stops_a_long_call_and_the_server_stays_usable(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    settings = {"mcpServers": {"test": stdio_entry()}, "permissions": {"mcp__test": "allow"}}
    h = await make_harness(settings)
    api.enqueue(reply(tool_use("mcp__test__slow", {"seconds": 60})))
    session = await h.agent.new_session()
    turn = asyncio.create_task(h.agent.prompt(session.id, "wait"))
    await h.wait_for("tool-call", timeout=30)
    await asyncio.sleep(0.3)  # the call is out
    assert await h.agent.cancel(session.id)
    result = await asyncio.wait_for(turn, 10)  # not the 60 s of the call
    assert result.finish_reason == "cancelled"
    api.enqueue(reply(tool_use("mcp__test__echo", {"text": "still here"})), reply(text("done")))
    again = await h.agent.prompt(session.id, "again")
    assert again.finish_reason == "end_turn"
    assert result_text(last_results(h.accepted_requests()[-1])[0]) == "echo: still here"


async def test_new_settings_add_and_remove_servers_at_the_next_turn(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pids"
    h = await make_harness()
    api.enqueue(reply(text("one")), reply(text("two")), reply(text("three")))
    await run_turn(h)
    assert not [n for n in tool_names(h.accepted_requests()[0]) if n.startswith("mcp__")]
    servers = {"late": stdio_entry(MCP_TEST_PIDFILE=str(pidfile))}
    h.agent.update_settings(h.agent.settings.model_copy(update={"mcp_servers": servers}))
    await run_turn(h)
    assert "mcp__late__echo" in tool_names(h.accepted_requests()[1])
    (pid,) = pids(pidfile)
    h.agent.update_settings(h.agent.settings.model_copy(update={"mcp_servers": {}}))
    await run_turn(h)
    assert not [n for n in tool_names(h.accepted_requests()[2]) if n.startswith("mcp__")]
    assert not alive(pid)  # a removed server is stopped


async def test_an_http_server_gone_between_turns_is_said_and_the_session_goes_on(
    make_harness: HarnessFactory, api: MessagesAPIServer, http_process: HttpServer
) -> None:
    entry = {"type": "http", "url": http_process.url, "timeout": 5000}
    h = await make_harness({"mcpServers": {"web": entry}})
    api.enqueue(reply(text("first")), reply(text("second")))
    await run_turn(h)
    assert "mcp__web__add" in tool_names(h.accepted_requests()[0])
    http_process.proc.terminate()
    http_process.proc.wait(10)
    result = await run_turn(h)
    assert result.finish_reason == "end_turn" and result.text == "second"
    (error,) = h.of_type("error")
    assert "'web'" in error.message and http_process.url in error.message
    assert "failed to start" in error.message  # the restart, once in this turn
    assert not [n for n in tool_names(h.accepted_requests()[1]) if n.startswith("mcp__web")]
