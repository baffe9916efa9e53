"""A second, independent ACP client: npm's acpx (installed by `make acpx-deps`, part of
`make test`) runs `agentls acp` for one prompt that reads, asks to edit, and edits a file."""

from __future__ import annotations

import json
import subprocess
import sys
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
    writes = [f for f in sent if f.get("method") == "fs/write_text_file"]
    assert [w["params"]["content"] for w in writes] == ["A = 2\n"]
    chunks = [
        f["params"]["update"]["content"]["text"]
        for f in sent
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert "".join(chunks) == "Reading.Done: A is 2."
    results = [f["result"] for f in sent if isinstance(f.get("result"), dict)]
    assert {"stopReason": "end_turn"}.items() <= results[-1].items()
