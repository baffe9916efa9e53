"""`agentls rewind` as a separate process against a real store and a disk workspace: the list of
checkpoints, a dry run, a rewind with a conflict (its three versions written out), the bash
commands not undone, the dropped prompt, and --redo."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

from agentls.store import Store
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls


def edit(path: str, old: str, new: str) -> object:
    return tool_use("edit", {"path": path, "old_string": old, "new_string": new})


def test_rewind_lists_rewinds_with_a_conflict_and_redoes(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("a = 1\n")
    (ws / "b.py").write_text("b = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "a.py"})),
        reply(edit("a.py", "a = 1", "a = 2")),
        reply(tool_use("write", {"path": "new.txt", "content": "new\n"})),
        reply(tool_use("bash", {"command": "echo ran > ran.txt"})),
        reply(text("first done")),
    )
    first = agentls("run", "--cwd", str(ws), "--yes", "--json", "first\nmore lines", env=env)
    assert first.returncode == 0, first.stderr
    session = json.loads(first.stdout.splitlines()[-1])["sessionId"]
    api.enqueue(
        reply(tool_use("read", {"path": "a.py"}), tool_use("read", {"path": "b.py"})),
        reply(edit("a.py", "a = 2", "a = 3"), edit("b.py", "b = 1", "b = 2")),
        reply(text("second done")),
    )
    second = agentls("run", "--cwd", str(ws), "--session", session, "--yes", "second", env=env)
    assert second.returncode == 0, second.stderr
    assert (ws / "a.py").read_text() == "a = 3\n" and (ws / "b.py").read_text() == "b = 2\n"

    def rewind(*args: str) -> tuple[int, str, str]:
        done = agentls("rewind", "--session", session, *args, env=env, cwd=ws)
        return done.returncode, done.stdout, done.stderr

    code, out, err = rewind()
    assert code == 0, err
    lines = out.splitlines()
    assert re.match(r"\s+1  \d{4}-\d\d-\d\d \d\d:\d\d  first$", lines[0])
    assert lines[1].split() == [
        "restores",
        "a.py,",
        "new.txt,",
        "b.py;",
        "1",
        "bash",
        "command(s)",
        "not",
        "undone",
    ]
    assert re.match(r"\s+2  .*  second$", lines[2]) and lines[3].split() == [
        "restores",
        "a.py,",
        "b.py",
    ]

    # The user changes b.py after the agent's edit: it is a conflict, left alone.
    (ws / "b.py").write_text("b = 2\nmine = True\n")
    code, out, err = rewind("--to", "1", "--dry-run")
    assert code == 1, err
    assert "would restore: a.py" in out and "would restore: new.txt" in out
    assert "conflict: b.py changed since; left as it is" in out and "before:" not in out
    assert "would drop the conversation from your message:\n  first\n  more lines" in out
    assert (ws / "a.py").read_text() == "a = 3\n" and (ws / "new.txt").exists()

    code, out, err = rewind("--to", "1")
    assert code == 1, err
    assert "restored: a.py" in out and "restored: new.txt" in out
    assert "not undone (bash): echo ran > ran.txt" in out
    assert "dropped the conversation from your message:\n  first" in out
    assert (ws / "a.py").read_text() == "a = 1\n" and not (ws / "new.txt").exists()
    assert (ws / "b.py").read_text() == "b = 2\nmine = True\n" and (ws / "ran.txt").exists()
    versions = dict(re.findall(r"^  (before|agent|current): (\S+)$", out, re.MULTILINE))
    assert Path(versions["before"]).read_text() == "b = 1\n"
    assert Path(versions["agent"]).read_text() == "b = 2\n"
    assert Path(versions["current"]).read_text() == "b = 2\nmine = True\n"
    listed = rewind()[1]
    assert "first (reverted)" in listed and "second (reverted)" in listed

    code, out, err = rewind("--redo")
    assert code == 0, err
    assert "put back: a.py" in out and "put back: new.txt" in out
    assert (ws / "a.py").read_text() == "a = 3\n" and (ws / "new.txt").read_text() == "new\n"
    assert "reverted" not in rewind()[1]
    code, _, err = rewind("--redo")
    assert code == 2 and "nothing to redo" in err
    code, _, err = rewind("--to", "3")
    assert code == 2 and "--to 3: the messages are 1 to 2" in err
    code, _, err = rewind("--session", "ses_nope")
    assert code == 2


def test_rewind_of_the_code_only_keeps_the_conversation(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    api.enqueue(reply(tool_use("write", {"path": "w.txt", "content": "w\n"})), reply(text("ok")))
    done = agentls("run", "--cwd", str(ws), "--yes", "--json", "write w", env=env)
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout.splitlines()[-1])["sessionId"]
    rewound = agentls(
        "rewind", "--session", session, "--to", "1", "--scope", "code", env=env, cwd=ws
    )
    assert rewound.returncode == 0, rewound.stderr
    assert rewound.stdout == "restored: w.txt\n" and not (ws / "w.txt").exists()
    api.enqueue(reply(text("still here")))
    more = agentls("run", "--cwd", str(ws), "--session", session, "again", env=env)
    assert more.returncode == 0, more.stderr
    assert "write w" in json.dumps(api.requests[-1].body["messages"])


def test_a_session_busy_in_another_process_is_listed_but_not_rewound(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    api.enqueue(reply(text("ok")))
    done = agentls("run", "--cwd", str(ws), "--json", "hello there", env=env)
    session = json.loads(done.stdout.splitlines()[-1])["sessionId"]

    async def locked(*args: str) -> subprocess.CompletedProcess[str]:
        # This test process runs "a turn" of the session: it holds its lock in the store.
        store = await Store.open(Path(env["AGENTLS_DATA_DIR"]) / "agentls.db")
        try:
            await store.lock_session(session, "a-turn-elsewhere")
            return await asyncio.to_thread(
                agentls, "rewind", "--session", session, *args, env=env, cwd=ws
            )
        finally:
            await store.unlock_session(session, "a-turn-elsewhere")
            await store.close()

    listed = asyncio.run(locked())
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.rstrip().endswith("hello there") and "busy" in listed.stderr
    refused = asyncio.run(locked("--to", "1"))
    assert refused.returncode == 2 and "busy" in refused.stderr
    assert "reverted" not in agentls("rewind", "--session", session, env=env, cwd=ws).stdout
