"""`agentls run` shows the finish gate's result on the turn: a line each time the turn's files are
checked again before it may end (the real CLI process, the model's replies scripted)."""

from __future__ import annotations

from pathlib import Path

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls, workspace  # noqa: F401 - fixtures


def test_the_gate_sends_the_new_error_back_and_says_so_then_that_none_is_left(
    api: MessagesAPIServer,
    env: dict[str, str],
    workspace: Path,  # noqa: F811
) -> None:
    (workspace / "a.py").write_text("def compute(x):\n    return x * 2\n")
    broken = {"path": "a.py", "old_string": "def compute(x):", "new_string": "def compute(x)"}
    fixed = {"path": "a.py", "old_string": "def compute(x)\n", "new_string": "def compute(x):\n"}
    api.enqueue(
        reply(tool_use("read", {"path": "a.py"})),
        reply(tool_use("edit", broken)),
        reply(text("Done.")),
        reply(tool_use("edit", fixed)),
        reply(text("Fixed the colon.")),
    )
    proc = agentls("run", "--cwd", str(workspace), "--yes", "change compute", env=env)
    assert proc.returncode == 0, proc.stderr
    gate = [line for line in proc.stdout.splitlines() if line.startswith("[finish gate]")]
    assert gate == [
        "[finish gate] Checked 1 file: 1 new error, sent back to the model (1 of 2)",
        "[finish gate] Checked 1 file: no new errors",
    ], proc.stdout
    # The last check comes after the answer that would end the turn, on its own line.
    assert proc.stdout.rstrip().endswith(
        "Fixed the colon.\n[finish gate] Checked 1 file: no new errors"
    )
    assert (workspace / "a.py").read_text() == "def compute(x):\n    return x * 2\n"
