"""A provider's apiKeyEnv is a credential: kept from the commands agentls runs (bash's environment,
/proc) before that provider is used, and no key of the user goes to a provider without its own.
Each attack is counted in the security table (tests/security/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from chat_completions_api import ChatCompletionsServer
from chat_completions_api import reply as chat_reply
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.security.attack_support import results_of
from tests.security.conftest import SecurityFigures

# ---- a provider's apiKeyEnv: a credential, kept from the commands agentls runs --------------

KEY_KIND = "API key read by bash"


def test_a_providers_key_is_not_in_bash_before_that_provider_is_used(
    api: MessagesAPIServer,
    env: dict[str, str],
    tmp_path: Path,
    security_figures: SecurityFigures,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    config = Path(env["XDG_CONFIG_HOME"]) / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    provider = {"type": "openai", "baseUrl": "http://127.0.0.1:9/v1", "apiKeyEnv": "ROUTER_KEY"}
    config.write_text(
        json.dumps(
            {"providers": {"router": provider}, "permissions": {"bash": "allow"}, "sandbox": "off"}
        )
    )
    every_environ = "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c ROUTER_KEY="
    api.enqueue(
        reply(
            tool_use("bash", {"command": "env"}),
            tool_use("bash", {"command": every_environ}),
        ),
        reply(text("done")),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "agentls.cli.main", "run", "--cwd", str(repo), "--yes", "env?"],
        env={**env, "ROUTER_KEY": "sk-router-SECRET789"},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    environment, processes = (str(r["content"]) for r in results_of(api.requests[-1].body))
    assert "PATH=" in environment
    with security_figures.attempt(KEY_KIND):
        assert "sk-router-SECRET789" not in environment
    with security_figures.attempt(KEY_KIND):
        # Only the test's own process (pytest, started with it) and agentls's holds it no more.
        assert processes.strip().splitlines()[0] == "0", processes


def test_no_key_of_the_user_goes_to_a_provider_without_its_own(
    env: dict[str, str], tmp_path: Path, security_figures: SecurityFigures
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    config = Path(env["XDG_CONFIG_HOME"]) / "agentls" / "config.json"
    config.parent.mkdir(parents=True)
    secrets = {"ANTHROPIC_API_KEY": "sk-ant-SECRET1", "OPENAI_API_KEY": "sk-openai-SECRET2"}
    with ChatCompletionsServer() as chat:
        chat.enqueue(chat_reply("hello"))
        local = {"type": "openai", "baseUrl": chat.url}
        config.write_text(json.dumps({"providers": {"local": local}}))
        proc = subprocess.run(
            [sys.executable, "-m", "agentls.cli.main", "run", "--cwd", str(repo)]
            + ["--model", "local/m", "hi"],
            env={**env, **secrets},
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        [request] = chat.requests
    sent = json.dumps(request.headers) + json.dumps(request.body)
    for secret in secrets.values():
        with security_figures.attempt("API key sent to another provider"):
            assert secret not in sent
