"""`agentls run` with a local model served in the strictest OpenAI-compatible dialect (the Chat
Completions double in strict mode, as llama-cpp-python answers): a tool-using turn completes, its
tokens are shown as estimated; a request the server refuses is said once, not retried."""

from __future__ import annotations

import json
from pathlib import Path

from chat_completions_api import ChatCompletionsServer, error, reply, tool_call
from tests.cli.test_cli import agentls, workspace

__all__ = ["workspace"]


def local_model(tmp_path: Path, server: ChatCompletionsServer) -> None:
    config = tmp_path / "config" / "agentls" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    provider = {"type": "openai", "baseUrl": server.url}
    config.write_text(json.dumps({"model": "llama/qwen3-coder", "providers": {"llama": provider}}))


def test_a_tool_using_turn_of_a_local_model_completes_with_estimated_usage(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    with ChatCompletionsServer(strict=True) as server:
        local_model(tmp_path, server)
        server.enqueue(reply(tool_call("read", {"path": "notes.txt"})), reply("It says 42."))
        env = {**env, "AGENTLS_MODEL": "llama/qwen3-coder"}
        proc = agentls("run", "--cwd", str(workspace), "--yes", "what do the notes say?", env=env)
        requests = server.all_requests
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "It says 42." in proc.stdout
    assert [r.status for r in requests] == [200, 200]
    called = [m for m in requests[1].body["messages"] if m.get("tool_calls")]
    assert called[0]["content"] == ""
    assert "cost ~$" in proc.stdout or "~$" in proc.stderr, proc.stdout + proc.stderr


def test_a_request_the_local_server_refuses_is_said_once(
    env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    refusal = (
        "1 validation error for CreateChatCompletionRequest\nbody.messages.1.typed-dict.content\n"
        "  Input should be a valid string [type=string_type, input_value=None]\n"
        "    For further information visit https://errors.pydantic.dev/2.9/v/string_type"
    )
    with ChatCompletionsServer([error(500, refusal, "internal_server_error")]) as server:
        local_model(tmp_path, server)
        env = {**env, "AGENTLS_MODEL": "llama/qwen3-coder"}
        proc = agentls("run", "--cwd", str(workspace), "hi", env=env)
        asked, url = len(server.all_requests), server.url
    assert proc.returncode == 1
    assert asked == 1  # not retried
    said = proc.stdout + proc.stderr
    assert (
        f"[error] The llama provider's server ({url}) refused the request (HTTP 500): "
        "body.messages.1.typed-dict.content: Input should be a valid string.\n"
    ) in proc.stdout, said
    assert said.count("validation error") == 0 and "Traceback" not in said
