"""A second process on a busy session: while one `agentls run --session S` runs a turn of S,
another process (`agentls run --session S`, or `agentls serve` prompting S) is refused with
"session S is busy in another agentls process (pid N)", and the history never interleaves. The
lock lives in the database (session_locks) and goes stale when its holder dies: a kill -9'd
holder, a pid now running another program, a lock from before a reboot never block for good."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentls.store.session_locks import process_start
from messages_api import MessagesAPIServer, reply, text
from tests.reliability.support import Serve
from tests.security.conftest import SecurityFigures
from tests.security.fault_support import agentls, agentls_env, one_line_error, spawn_agentls

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def env(tmp_path: Path, api: MessagesAPIServer) -> dict[str, str]:
    return agentls_env(tmp_path, api)


def db_of(env: dict[str, str]) -> Path:
    return Path(env["AGENTLS_DATA_DIR"]) / "agentls.db"


def new_session(api: MessagesAPIServer, workspace: Path, env: dict[str, str]) -> str:
    api.enqueue(reply(text("first answer")))
    proc = agentls("run", "--cwd", str(workspace), "--json", "first", env=env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    return str(result["sessionId"])


def history(env: dict[str, str], session_id: str) -> list[tuple[str, str]]:
    """(role, text) of each stored message of the session, in order."""
    conn = sqlite3.connect(db_of(env))
    try:
        rows = conn.execute(
            "SELECT m.role, coalesce(group_concat(json_extract(p.data, '$.text'), ''), '')"
            " FROM messages m LEFT JOIN parts p ON p.message_id = m.id AND p.type = 'text'"
            " WHERE m.session_id = ? GROUP BY m.id ORDER BY m.seq",
            (session_id,),
        ).fetchall()
    finally:
        conn.close()
    return [(str(role), str(body)) for role, body in rows]


def lock_row(env: dict[str, str], session_id: str) -> tuple[int, int] | None:
    conn = sqlite3.connect(db_of(env))
    try:
        row = conn.execute(
            "SELECT pid, process_start FROM session_locks WHERE session_id = ?", (session_id,)
        ).fetchone()
    finally:
        conn.close()
    return None if row is None else (int(row[0]), int(row[1]))


def start_holder(
    api: MessagesAPIServer, workspace: Path, env: dict[str, str], session_id: str
) -> tuple[subprocess.Popen[str], threading.Event]:
    """`agentls run --session S` stopped mid-turn (its answer held by the API) until the event."""
    hold = threading.Event()
    api.enqueue(reply(text("the holder's answer"), hold=hold))
    before = len(api.requests)
    holder = spawn_agentls(
        "run", "--cwd", str(workspace), "--session", session_id, "--json", "second", env=env
    )
    api.wait_for_requests(before + 1, timeout=60)  # its turn runs: it holds the lock
    return holder, hold


def test_a_second_process_on_a_busy_session_is_refused_and_nothing_interleaves(
    api: MessagesAPIServer,
    workspace: Path,
    env: dict[str, str],
    tmp_path: Path,
    security_figures: SecurityFigures,
) -> None:
    session_id = new_session(api, workspace, env)
    holder, hold = start_holder(api, workspace, env, session_id)
    busy = f"session {session_id} is busy in another agentls process (pid {holder.pid})"
    try:
        asked = len(api.requests)
        for attempt in ("interleave one", "interleave two"):
            with security_figures.attempt("concurrent session"):
                proc = agentls(
                    "run", "--cwd", str(workspace), "--session", session_id, attempt, env=env
                )
                assert proc.returncode == 1, (proc.stdout, proc.stderr)
                assert busy in one_line_error(proc.stderr)
        # The language server runs the same Agent: the same refusal, as a JSON-RPC error.
        with security_figures.attempt("concurrent session"):
            server = Serve(workspace, env, stderr=tmp_path / "serve.stderr")
            try:
                server.initialize({"model": "claude-sonnet-5-5"})
                answer = server.request(
                    "agent/prompt", {"sessionId": session_id, "text": "from the editor"}, 60
                )
                assert answer.get("error", {}).get("code") == -32803, answer
                assert busy in answer["error"]["message"], answer
            finally:
                server.stop()
            assert "Traceback" not in (tmp_path / "serve.stderr").read_text()
        assert len(api.requests) == asked  # no refused process reached the model
    finally:
        hold.set()
        out, err = holder.communicate(timeout=60)
    assert holder.returncode == 0, err
    assert lock_row(env, session_id) is None  # released at the turn's end
    # Free again: the next process runs its turn.
    api.enqueue(reply(text("third answer")))
    third = agentls("run", "--cwd", str(workspace), "--session", session_id, "third", env=env)
    assert third.returncode == 0, third.stderr
    assert history(env, session_id) == [
        ("user", "first"),
        ("assistant", "first answer"),
        ("user", "second"),
        ("assistant", "the holder's answer"),
        ("user", "third"),
        ("assistant", "third answer"),
    ]


def test_a_kill_9d_holder_never_blocks_the_session(
    api: MessagesAPIServer, workspace: Path, env: dict[str, str], security_figures: SecurityFigures
) -> None:
    session_id = new_session(api, workspace, env)
    holder, hold = start_holder(api, workspace, env, session_id)
    holder.kill()
    holder.communicate(timeout=30)
    hold.set()
    assert lock_row(env, session_id) is not None  # left behind by the dead process
    with security_figures.attempt("concurrent session"):
        api.enqueue(reply(text("after the crash")))
        proc = agentls("run", "--cwd", str(workspace), "--session", session_id, "again", env=env)
        assert proc.returncode == 0, proc.stderr
        assert "after the crash" in proc.stdout
        assert lock_row(env, session_id) is None
        roles = [role for role, _ in history(env, session_id)]
        assert roles[-2:] == ["user", "assistant"]


# A lock row written by hand, as another process would have left it: (pid, process start, boot
# id) of a live process, of one given a reused pid, of a dead one, and of one from before a
# reboot. Only the first holds the session.
HOLDERS = ["live holder", "pid reused by another program", "dead holder", "before a reboot"]


@pytest.mark.parametrize("holder", HOLDERS)
def test_a_lock_holds_only_while_its_process_lives(
    holder: str,
    api: MessagesAPIServer,
    workspace: Path,
    env: dict[str, str],
    security_figures: SecurityFigures,
) -> None:
    session_id = new_session(api, workspace, env)
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        pid = sleeper.pid
        start = process_start(pid)
        assert start is not None
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        if holder == "pid reused by another program":
            start -= 1
        elif holder == "dead holder":
            sleeper.kill()
            sleeper.wait()
        elif holder == "before a reboot":
            boot = "00000000-0000-0000-0000-000000000000"
        conn = sqlite3.connect(db_of(env))
        with conn:
            conn.execute(
                "INSERT INTO session_locks (session_id, owner, pid, host, boot_id, process_start,"
                " started_at) VALUES (?, 'agent_elsewhere', ?, ?, ?, ?, 0)",
                (session_id, pid, socket.gethostname(), boot, start),
            )
        conn.close()
        with security_figures.attempt("concurrent session"):
            api.enqueue(reply(text("ran")))
            proc = agentls("run", "--cwd", str(workspace), "--session", session_id, "go", env=env)
            if holder == "live holder":
                assert proc.returncode == 1, proc.stdout
                assert (
                    f"session {session_id} is busy in another agentls process (pid {pid})"
                    in one_line_error(proc.stderr)
                )
                assert lock_row(env, session_id) == (pid, start)
                assert [role for role, _ in history(env, session_id)] == ["user", "assistant"]
            else:
                assert proc.returncode == 0, proc.stderr
                assert "ran" in proc.stdout
                assert lock_row(env, session_id) is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_server_holding_a_session_continues_from_another_process_turn(
    api: MessagesAPIServer,
    workspace: Path,
    env: dict[str, str],
    tmp_path: Path,
    security_figures: SecurityFigures,
) -> None:
    """The language server has the session loaded; a CLI runs a turn of it; the server's next
    turn starts from the store's history (the CLI's turn included), not from its own copy."""
    session_id = new_session(api, workspace, env)
    server = Serve(workspace, env, stderr=tmp_path / "serve.stderr")
    try:
        server.initialize({"model": "claude-sonnet-5-5"})
        server.call("agent/getMessages", {"sessionId": session_id})  # loaded in the server
        api.enqueue(reply(text("the CLI's answer")))
        cli = agentls("run", "--cwd", str(workspace), "--session", session_id, "cli", env=env)
        assert cli.returncode == 0, cli.stderr
        with security_figures.attempt("concurrent session"):
            api.enqueue(reply(text("the editor's answer")))
            server.call("agent/prompt", {"sessionId": session_id, "text": "editor"}, 60)
            sent = api.requests[-1].body["messages"]
            said = [
                block["text"]
                for message in sent
                for block in message["content"]
                if isinstance(block, dict) and block.get("type") == "text"
            ]
            assert "the CLI's answer" in said, said
    finally:
        server.stop()
    assert history(env, session_id) == [
        ("user", "first"),
        ("assistant", "first answer"),
        ("user", "cli"),
        ("assistant", "the CLI's answer"),
        ("user", "editor"),
        ("assistant", "the editor's answer"),
    ]
