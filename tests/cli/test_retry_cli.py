"""`agentls run` when the model's API fails: the sentence, the next step and how to retry instead
of a raw exception; `agentls run --session S --retry` goes on from where the turn failed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from messages_api import MessagesAPIServer, error, reply, text
from tests.cli.test_cli import agentls, workspace

__all__ = ["workspace"]


def one_attempt(tmp_path: Path) -> None:
    config = tmp_path / "config" / "agentls" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"apiMaxAttempts": 1}))


def test_a_failed_turn_says_what_to_do_and_retry_goes_on(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    one_attempt(tmp_path)
    api.stop()  # the API is down
    failed = agentls("run", "--cwd", str(workspace), "what is 6*7?", env=env)
    assert failed.returncode == 1
    out = failed.stdout
    assert "[error] The model's API could not be reached: the connection was refused." in out
    assert "Check your network connection" in out
    session = re.search(r"agentls run --session (ses_\w+) --retry", out)
    assert session, out
    assert "(details: The model request failed: connection failed:" in out
    assert "Traceback" not in failed.stderr

    api.start()  # it is back
    api.enqueue(reply(text("42")))
    retried = agentls("run", "--session", session.group(1), "--retry", env=env)
    assert retried.returncode == 0, retried.stderr
    assert "42" in retried.stdout
    sent = api.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]  # the prompt once, no new user message
    assert sent[0]["content"][-1]["text"] == "what is 6*7?"

    again = agentls("run", "--session", session.group(1), "--retry", env=env)
    assert again.returncode == 2 and "nothing to retry" in again.stderr


def test_a_refused_request_says_retry_will_not_help_and_retry_needs_a_session(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    api.enqueue(error(400, "invalid_request_error", "messages: bad"))
    failed = agentls("run", "--cwd", str(workspace), "go", env=env)
    assert failed.returncode == 1
    assert "[error] The API refused the request (HTTP 400)." in failed.stdout
    assert "--retry" not in failed.stdout  # Retry would not help
    api.enqueue(error(400, "invalid_request_error", "messages: bad"))
    as_json = agentls("run", "--cwd", str(workspace), "--json", "go", env=env)
    result = json.loads(as_json.stdout.splitlines()[-1])
    assert result["finishReason"] == "error"
    assert result["error"]["kind"] == "bad_request" and result["error"]["retryable"] is False
    assert result["error"]["message"] == "The API refused the request (HTTP 400)."
    usage = agentls("run", "--retry", env=env)
    assert usage.returncode == 2 and "--retry needs --session" in usage.stderr
