"""The reference server, npm's @modelcontextprotocol/server-everything (installed once into a
cache: $AGENTLS_TEST_CACHE, else ~/.cache/agentls-tests), through the loop: its tools listed,
two called, their results (a text, an image) reaching the model."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentls.session import CommandError
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.mcp.test_loop import last_results, result_text, run_turn, tool_names

PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"


@pytest.fixture(scope="session")
def everything() -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    cache = Path(os.environ.get("AGENTLS_TEST_CACHE") or Path.home() / ".cache" / "agentls-tests")
    prefix = cache / "server-everything"
    binary = prefix / "node_modules" / ".bin" / "mcp-server-everything"
    stamp = prefix / (PACKAGE.replace("/", "_") + ".installed")
    if not stamp.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", PACKAGE],
            cwd=prefix,
            check=True,
            timeout=600,
        )
        stamp.touch()
    assert binary.exists()
    return binary


async def test_server_everything_tools_listed_and_called(
    make_harness: HarnessFactory, api: MessagesAPIServer, everything: Path
) -> None:
    servers = {"everything": {"command": str(everything), "args": ["stdio"], "timeout": 60_000}}
    h = await make_harness({"mcpServers": servers, "permissions": {"mcp__everything": "allow"}})
    api.enqueue(
        reply(
            tool_use("mcp__everything__get-sum", {"a": 20, "b": 22}),
            tool_use("mcp__everything__get-tiny-image"),
        ),
        reply(text("done")),
    )
    result = await run_turn(h)
    assert result.finish_reason == "end_turn", h.of_type("error")
    first, second = h.accepted_requests()
    names = tool_names(first)
    assert {"mcp__everything__echo", "mcp__everything__get-sum"} <= set(names)
    # Added by the server once initialized (and said with tools/list_changed): in the first request.
    assert "mcp__everything__simulate-research-query" in names
    total, image = last_results(second)
    assert "42" in result_text(total) and not total.get("is_error")
    assert [b["source"]["media_type"] for b in image["content"] if b["type"] == "image"] == [
        "image/png"
    ]


async def test_a_slow_tools_progress_notifications_reach_the_front_ends_as_its_progress(
    make_harness: HarnessFactory, api: MessagesAPIServer, everything: Path
) -> None:
    servers = {"everything": {"command": str(everything), "args": ["stdio"], "timeout": 60_000}}
    h = await make_harness({"mcpServers": servers, "permissions": {"mcp__everything": "allow"}})
    api.enqueue(
        reply(
            tool_use("mcp__everything__trigger-long-running-operation", {"duration": 1, "steps": 3})
        ),
        reply(text("done")),
    )
    result = await run_turn(h)
    assert result.finish_reason == "end_turn", h.of_type("error")
    (call,) = h.of_type("tool-call")
    # The call carried a progress token: the server's three notifications are the call's progress.
    progress = [e.message for e in h.of_type("progress") if e.call_id == call.call_id]
    assert progress == ["1/3", "2/3", "3/3"]


async def test_a_servers_resources_are_listed_and_read_and_a_file_resource_meets_the_read_rules(
    make_harness: HarnessFactory, api: MessagesAPIServer, everything: Path, tmp_path: Path
) -> None:
    servers = {"everything": {"command": str(everything), "args": ["stdio"], "timeout": 60_000}}
    h = await make_harness({"mcpServers": servers, "permissions": {"mcp__everything": "allow"}})
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("not for the server\n")
    doc = "demo://resource/static/document/architecture.md"
    api.enqueue(
        reply(
            tool_use("mcp__everything__resources", {}),
            tool_use("mcp__everything__resources", {"uri": doc}),
            tool_use("mcp__everything__resources", {"uri": outside.as_uri()}),
        ),
        reply(text("done")),
    )
    result = await run_turn(h)
    assert result.finish_reason == "end_turn", h.of_type("error")
    first, second = h.accepted_requests()
    assert "mcp__everything__resources" in tool_names(first)
    listed, read, refused = last_results(second)
    assert doc in result_text(listed) and not listed.get("is_error")
    assert f"[resource {doc} (text/markdown)]" in result_text(read) and not read.get("is_error")
    # A file of this machine outside the workspace: the read rules refuse it before the server
    # is asked.
    assert refused.get("is_error") and "outside the workspace" in result_text(refused)
    assert "not for the server" not in result_text(refused)


async def test_a_servers_prompts_are_slash_commands_with_their_arguments(
    make_harness: HarnessFactory, api: MessagesAPIServer, everything: Path
) -> None:
    servers = {"everything": {"command": str(everything), "args": ["stdio"], "timeout": 60_000}}
    h = await make_harness({"mcpServers": servers})
    session = await h.agent.new_session()
    # Named before any turn started the server: it is started to find the prompt.
    with pytest.raises(CommandError, match="city"):
        await h.agent.prompt(session.id, "/mcp__everything__args-prompt")
    commands = h.agent.list_commands()
    assert commands["mcp__everything__simple-prompt"].source == "mcp"
    assert "city" in commands["mcp__everything__args-prompt"].description
    api.enqueue(reply(text("sunny")))
    result = await h.agent.prompt(session.id, "/mcp__everything__args-prompt Paris")
    assert result.finish_reason == "end_turn"
    (request,) = h.accepted_requests()
    sent = request["messages"][-1]["content"]
    sent_text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert "What's weather in Paris?" in sent_text
