"""A second, independent ACP client: npm's acpx (installed by `make acpx-deps`, part of
`make test`) runs `agentls acp` for one prompt that reads, asks to edit, and edits a file; at a
terminal, acpx asks once per edit and prints each tool's output once."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from messages_api import MessagesAPIServer, reply, text, tool_use

ACPX = Path(__file__).parent / "acpx" / "node_modules" / ".bin" / "acpx"


def frames(stdout: str) -> list[dict[str, Any]]:
    """The JSON-RPC frames acpx prints with --format json."""
    out = []
    for line in stdout.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


@pytest.mark.skipif(not ACPX.exists(), reason="acpx is not installed: make acpx-deps")
def test_acpx_runs_a_prompt(api: MessagesAPIServer, env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("A = 1\n")
    api.enqueue(
        reply(text("Reading."), tool_use("read", {"path": "a.py"})),
        reply(tool_use("edit", {"path": "a.py", "old_string": "A = 1", "new_string": "A = 2"})),
        reply(text("Done: A is 2.")),
    )
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run(
        [
            str(ACPX),
            "--agent",
            f"{sys.executable} -m agentls.cli.main acp",
            "--cwd",
            str(root),
            "--approve-all",
            "--format",
            "json",
            "--timeout",
            "60",
            "exec",
            "set A to 2",
        ],
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (root / "a.py").read_text() == "A = 2\n"
    sent = frames(proc.stdout)
    asks = [f for f in sent if f.get("method") == "session/request_permission"]
    assert len(asks) == 1
    diff = asks[0]["params"]["toolCall"]["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(root / "a.py"),
        "oldText": "A = 1\n",
        "newText": "A = 2\n",
    }
    # acpx asks again before each fs/write_text_file: the approved edit is written by agentls.
    assert not [f for f in sent if f.get("method") == "fs/write_text_file"]
    updates = [f["params"]["update"] for f in sent if f.get("method") == "session/update"]
    done = [u for u in updates if u.get("status") == "completed"]
    assert done and all("rawOutput" not in u for u in done)  # the output once, in the content
    chunks = [
        f["params"]["update"]["content"]["text"]
        for f in sent
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert "".join(chunks) == "Reading.Done: A is 2."
    results = [f["result"] for f in sent if isinstance(f.get("result"), dict)]
    assert {"stopReason": "end_turn"}.items() <= results[-1].items()


def _interactive(args: list[str], env: dict[str, str], answer: bytes) -> tuple[str, str, int]:
    """acpx at a terminal (its stdin and stderr a pty: it asks there), each "(y/N)" answered
    `answer`; its stdout, what it wrote at the terminal, and its exit code."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        args, env=env, stdin=slave, stdout=subprocess.PIPE, stderr=slave, text=False
    )
    os.close(slave)
    seen = b""
    answered = 0
    assert proc.stdout is not None
    out = b""
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([master, proc.stdout], [], [], 1)
        if master in ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                pass
        if proc.stdout in ready:
            out += os.read(proc.stdout.fileno(), 65536)
        if seen.count(b"(y/N)") > answered:
            answered += 1
            os.write(master, answer)
    if proc.poll() is None:
        proc.kill()
    out += proc.stdout.read()
    proc.wait(10)
    os.close(master)
    return out.decode(), seen.decode(errors="replace"), proc.returncode


@pytest.mark.skipif(not ACPX.exists(), reason="acpx is not installed: make acpx-deps")
def test_acpx_at_a_terminal_asks_once_per_edit_and_prints_output_once(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("A = 1\n")
    api.enqueue(
        reply(
            tool_use("read", {"path": "a.py"}), tool_use("bash", {"command": "echo once-$((6*7))"})
        ),
        reply(tool_use("edit", {"path": "a.py", "old_string": "A = 1", "new_string": "A = 2"})),
        reply(text("Done.")),
    )
    home = tmp_path / "home"
    home.mkdir()
    out, terminal, code = _interactive(
        [
            str(ACPX),
            "--agent",
            f"{sys.executable} -m agentls.cli.main acp",
            "--cwd",
            str(root),
            "--timeout",
            "60",
            "exec",
            "set A to 2",
        ],
        {**env, "HOME": str(home)},
        b"y\n",
    )
    assert code == 0, terminal
    assert (root / "a.py").read_text() == "A = 2\n", terminal + out
    # One question for the command, one for the edit; none again for the edit's write.
    assert terminal.count("(y/N)") == 2, terminal
    assert "Allow write?" not in terminal, terminal
    assert out.count("once-42") == 1, out
