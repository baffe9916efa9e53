"""`agentls run` prints a sub-agent's steps indented under its task."""

from __future__ import annotations

from pathlib import Path

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls, workspace

__all__ = ["workspace"]  # the fixture


def test_run_prints_a_sub_agents_steps_indented(
    api: MessagesAPIServer, env: dict[str, str], workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    api.enqueue(
        reply(tool_use("task", {"description": "find notes", "prompt": "Read notes.txt"})),
        reply(tool_use("read", {"path": "notes.txt"})),
        reply(text("it says: remember the milk")),
        reply(text("Milk.")),
    )
    proc = agentls("run", "--cwd", str(workspace), "what do my notes say?", env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = lines.index("    [general] Read notes.txt")
    assert lines[start + 1].startswith("    [+] ") and "notes.txt" in lines[start + 1]
    assert lines[start + 2].startswith("[+] task: find notes: it says: remember the milk")
    # The sub-agent's own text is not streamed into the answer.
    assert proc.stdout.count("it says: remember the milk") == 1
    assert proc.stdout.rstrip().endswith("Milk.")
