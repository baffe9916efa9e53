"""`agentls run --review after` applies the edits that would ask at once; `agentls review` lists
them with their hunks, keeps a hunk, refuses to undo a file the user changed (a conflict), undoes
one, keeps them all. Separate processes against a real store and the disk."""

from __future__ import annotations

import json
from pathlib import Path

from messages_api import MessagesAPIServer, reply, text, tool_use
from messages_api.replies import Block
from tests.cli.test_cli import agentls

BEFORE = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n"
AFTER = "a = 10\nb = 2\nc = 3\nd = 4\ne = 50\n"


def run_after(api: MessagesAPIServer, env: dict[str, str], workspace: Path, *calls: Block) -> str:
    api.enqueue(*(reply(call) for call in calls), reply(text("done")))
    ran = agentls(
        "run", "--cwd", str(workspace), "--review", "after", "--json", "change it", env=env
    )
    assert ran.returncode == 0, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    assert not [e for e in lines if e["type"] == "permission-request"]  # nothing asked
    assert [e for e in lines if e["type"] == "review"]
    return str(lines[-1]["sessionId"])


def test_review_lists_keeps_a_hunk_refuses_a_conflict_and_undoes(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    calc = workspace / "calc.py"
    calc.write_text(BEFORE)
    session = run_after(
        api,
        env,
        workspace,
        tool_use("read", {"path": "calc.py"}),
        tool_use("write", {"path": "calc.py", "content": AFTER}),
    )
    assert calc.read_text() == AFTER

    # Listed from another directory: the session's workspace is found by itself.
    listed = agentls("review", "--session", session, env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[:4] == [
        "calc.py: 2 hunks",
        "  hunk 0",
        "    @@ -1 +1 @@",
        "    -a = 1",
    ]
    assert "    +e = 50" in listed.stdout.splitlines()

    kept = agentls(
        "review", "--session", session, "--keep", "calc.py", "--hunk", "0", env=env, cwd=workspace
    )
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.splitlines()[:2] == ["calc.py: 1 hunk", "  hunk 0"]
    assert calc.read_text() == AFTER

    # The user changed the file: the undo writes nothing and says so (exit 1).
    calc.write_text(AFTER + "# mine\n")
    refused = agentls("review", "--session", session, "--undo", str(calc), env=env)
    assert refused.returncode == 1
    assert "conflict: calc.py changed since the agent's edit" in refused.stderr
    assert calc.read_text() == AFTER + "# mine\n"

    calc.write_text(AFTER)
    undone = agentls("review", "--session", session, "--undo", str(calc), "--json", env=env)
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout) == {"files": [], "conflicts": []}
    assert calc.read_text() == "a = 10\nb = 2\nc = 3\nd = 4\ne = 5\n"  # the kept hunk stays

    nothing = agentls("review", "--session", session, "--keep", str(calc), env=env)
    assert nothing.returncode == 2 and "has no change pending review" in nothing.stderr


def test_keep_all_and_a_hostile_text_shown_visibly(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = run_after(
        api,
        env,
        workspace,
        tool_use("write", {"path": "a.txt", "content": "title \x1b]0;pwned\x07\n"}),
        tool_use("write", {"path": "b.txt", "content": "b\n"}),
    )
    listed = agentls("review", "--session", session, "--cwd", str(workspace), env=env)
    assert listed.returncode == 0, listed.stderr
    assert "a.txt (new file): 1 hunk" in listed.stdout and "b.txt (new file)" in listed.stdout
    assert "\x1b" not in listed.stdout and "+title \\x1b]0;pwned\\x07" in listed.stdout

    kept = agentls("review", "--session", session, "--keep-all", env=env)
    assert kept.returncode == 0 and kept.stdout.strip() == "nothing pending review"
    assert (workspace / "a.txt").exists() and (workspace / "b.txt").read_text() == "b\n"

    bad = agentls("review", "--session", session, "--hunk", "1", env=env)
    assert bad.returncode == 2 and "--hunk goes with" in bad.stderr
    unknown = agentls("review", "--session", "nope", env=env)
    assert unknown.returncode == 2 and "unknown sessionId" in unknown.stderr


def test_without_review_after_the_edit_asks(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    api.enqueue(reply(tool_use("write", {"path": "a.txt", "content": "x\n"})), reply(text("ok")))
    ran = agentls("run", "--cwd", str(workspace), "--json", "write", env=env)
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    assert [e["type"] for e in lines if e["type"] in ("permission-request", "review")] == [
        "permission-request"
    ]
    assert not (workspace / "a.txt").exists()  # no terminal to answer: refused
