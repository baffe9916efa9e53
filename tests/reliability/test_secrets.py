"""Secrets: configured secret globs ask for read and stay out of grep/glob results, and the API key
never shows up anywhere the server writes or sends: events, notifications, logs (at DEBUG), the
database, error texts, requests to the model, or a bash command's environment."""

from __future__ import annotations

import uuid
from pathlib import Path

from agentls.permission.broker import Answer
from agentls.session import AskContext
from messages_api import MessagesAPIServer, error, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.reliability.support import Figures, Serve, serve_env


async def test_configured_secret_globs_ask_and_stay_out_of_searches(
    make_harness: HarnessFactory, api: MessagesAPIServer, figures: Figures
) -> None:
    asked: list[str] = []

    async def asker(ctx: AskContext) -> Answer:
        asked.append(ctx.query.subject)
        return Answer("reject")

    h = await make_harness(
        {
            "permissions": {"*": "allow"},
            "secretPatterns": ["*.secret", "config/credentials.json"],
        },
        asker=asker,
    )
    (h.root / "config").mkdir()
    (h.root / "config" / "credentials.json").write_text('{"token": "TOKEN-IN-FILE"}\n')
    (h.root / "db.secret").write_text("TOKEN-IN-FILE\n")
    (h.root / ".env").write_text("TOKEN-IN-FILE\n")
    (h.root / "ok.txt").write_text("TOKEN-IN-FILE is mentioned here\n")
    api.enqueue(
        reply(
            tool_use("read", {"path": "db.secret"}),
            tool_use("read", {"path": "config/credentials.json"}),
            tool_use("read", {"path": ".env"}),
            tool_use("grep", {"pattern": "TOKEN-IN-FILE"}),
            tool_use("glob", {"pattern": "**/*"}),
        ),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "look for tokens")
    parts = (await h.store.load_messages(session.id))[1].tool_parts()
    reads, grep, glob = parts[:3], parts[3], parts[4]
    checks = {
        "each secret read asked": sorted(asked) == [".env", "config/credentials.json", "db.secret"],
        "rejected reads show nothing": all(
            p.status == "error" and "TOKEN" not in (p.output or "") for p in reads
        ),
        "grep shows only ok.txt": "ok.txt" in (grep.output or "")
        and "secret" not in (grep.output or "").split("(")[0]
        and "credentials" not in (grep.output or ""),
        "grep says what it left out": "2 files that may hold secrets" in (grep.output or ""),
        "glob omits them": (glob.output or "").split("\n")[0] == "ok.txt"
        and "credentials" not in (glob.output or ""),
    }
    figures.add(
        "Secrets: configured globs (secretPatterns) and built-ins: read asks, grep/glob omit",
        len(checks),
        sum(checks.values()),
    )
    assert all(checks.values()), checks


def test_the_api_key_never_leaks(tmp_path: Path, figures: Figures) -> None:
    key = "sk-ant-canary-" + uuid.uuid4().hex
    workspace = tmp_path / "ws"
    workspace.mkdir()
    data = tmp_path / "data"
    log = tmp_path / "serve.log"
    # Its own environment, and the server's (the parent of bash's supervisor): Linux shows a
    # process's initial environment to processes of the same user that may trace it; the server
    # is non-dumpable, so the read is refused (tests/security/test_api_key.py has the memory).
    dump = (
        "env; tr '\\0' '\\n' < /proc/self/environ; echo key=$ANTHROPIC_API_KEY; set; "
        "server=$(awk '{print $4}' /proc/$PPID/stat); echo parent=$server; "
        "tr '\\0' '\\n' < /proc/$server/environ"
    )
    with MessagesAPIServer(strict_auth=True, api_key=key) as api:
        api.enqueue(
            reply(text("Checking the environment."), tool_use("bash", {"command": dump})),
            error(529, "overloaded_error"),
            reply(text("Looked.")),
            error(401, "authentication_error", "invalid x-api-key"),
        )
        env = serve_env(data, api.url, ANTHROPIC_API_KEY=key, AGENTLS_LOG="DEBUG")
        server = Serve(workspace, env, stderr=log)
        try:
            server.initialize(
                {
                    "model": "claude-sonnet-5-5",
                    "permissions": {"*": "allow"},
                    "apiRetryBaseDelayS": 0.01,
                    # Outside the sandbox, where the server's process is visible at all.
                    "sandbox": "off",
                }
            )
            session = server.call("agent/newSession", {})["sessionId"]
            first = server.call("agent/prompt", {"sessionId": session, "text": "show env"}, 60)
            second = server.call("agent/prompt", {"sessionId": session, "text": "again"}, 60)
            messages = server.call("agent/getMessages", {"sessionId": session})
            bad = server.request("agent/prompt", {"sessionId": "ses_nope", "text": "x"})
        finally:
            server.stop()
        bodies = [r.body for r in api.all_requests]
        used = [r for r in api.all_requests if key in r.headers.get("authorization", "")]
    assert first["finishReason"] == "end_turn" and second["finishReason"] == "error"
    assert used, "the key was not used at all, so this test proves nothing"
    bash_output = next(
        p["output"] for m in messages["messages"] for p in m["parts"] if p.get("tool") == "bash"
    )
    assert "key=" in bash_output and "PATH=" in bash_output
    # The server's environment was tried: refused (non-dumpable), or read without the key.
    tried = bash_output.rpartition("parent=")[2]
    assert "/environ: Permission denied" in tried or "AGENTLS_DATA_DIR=" in tried, tried
    places = {
        "events and notifications": repr(server.events) + repr(server.notifications),
        "server log at DEBUG": log.read_text(errors="replace"),
        "stored messages": repr(messages),
        "error texts": repr(second) + repr(bad),
        "requests to the model": repr(bodies),
        "bash environment": bash_output,
        "database files": b"".join(
            p.read_bytes() for p in data.glob("agentls.db*") if p.is_file()
        ).decode("latin-1"),
    }
    leaks = [name for name, content in places.items() if key in content]
    figures.add(
        "Secrets: API key canary searched in events, logs (DEBUG), DB, errors, requests, bash env",
        len(places),
        len(places) - len(leaks),
    )
    assert leaks == []
