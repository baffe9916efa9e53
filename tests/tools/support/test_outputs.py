"""Long output kept whole: bash saves all of an output past the inline cap to a file of the
session's own, which the read tool reads without a question; nothing else gets in that way (a
symlink or hard link in its place, another session, a path leading elsewhere)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentls.tools.support.outputs import SavedOutput, is_saved_output
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory


def saved(session: str, data: bytes, inline: int = 10) -> Path:
    out = SavedOutput(session, "bash-call", inline)
    for n in range(0, len(data), 7):
        out.feed(data[n : n + 7])
    path = out.close()
    assert path is not None
    return path


def test_an_output_past_the_inline_cap_is_saved_whole_and_private() -> None:
    data = b"".join(b"line %d\n" % n for n in range(1000))
    path = saved("ses_whole", data)
    assert path.read_bytes() == data
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(path.parent).st_mode & 0o777 == 0o700
    assert is_saved_output("ses_whole", path)
    assert is_saved_output("ses_whole", path.parent / ".." / path.parent.name / path.name)


def test_a_short_output_writes_no_file() -> None:
    out = SavedOutput("ses_short", "bash-call", 100)
    out.feed(b"tiny\n")
    assert out.close() is None


def test_another_session_or_a_neighbour_is_not_the_sessions_own(tmp_path: Path) -> None:
    path = saved("ses_one", b"x" * 100)
    assert not is_saved_output("ses_two", path)
    neighbour = path.with_name("other.txt")
    neighbour.write_text("secret")
    assert not is_saved_output("ses_one", neighbour)
    assert not is_saved_output("ses_one", path.parent / ".." / ".." / "etc" / "passwd")


def test_a_link_put_in_place_of_the_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY")
    path = saved("ses_link", b"y" * 100)
    path.unlink()
    path.symlink_to(secret)
    assert not is_saved_output("ses_link", path)
    path.unlink()
    planted = path.with_name("planted")  # a hard link needs the same file system
    planted.write_text("PRIVATE KEY")
    os.link(planted, path)
    assert not is_saved_output("ses_link", path)


def last_result(body: dict[str, Any]) -> dict[str, Any]:
    return next(b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result")


async def test_a_long_bash_output_is_read_in_full_through_the_loop(
    make_harness: HarnessFactory, api: MessagesAPIServer
) -> None:
    """The model runs a command with 200,000 lines of output, is told where all of it is, and
    reads a part from the middle with read, no question asked."""
    h = await make_harness({"permissions": {"bash": "allow"}})

    def read_the_middle(body: dict[str, Any]) -> Any:
        told = str(last_result(body)["content"])
        found = re.search(r"All of it is saved in (\S+): read it", told)
        assert found, told
        return reply(tool_use("read", {"file_path": found.group(1), "offset": 100_000, "limit": 3}))

    api.enqueue(
        reply(tool_use("bash", {"command": "seq 1 200000"})),
        read_the_middle,
        reply(text("done")),
    )
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "count")
    bodies = h.accepted_requests()
    told = str(last_result(bodies[1])["content"])
    assert len(told) < 35_000 and "are left out" in told
    read = str(last_result(bodies[2])["content"])
    assert "100000\t100000" in read and "100002\t100002" in read
    assert not h.of_type("permission-request")  # its own file: nobody was asked


def test_a_session_keeps_its_last_outputs_only(monkeypatch: Any) -> None:
    monkeypatch.setattr("agentls.tools.support.outputs.MAX_KEPT", 2)
    first, second, third = (saved("ses_keep", b"z" * 100) for _ in range(3))
    assert not first.exists() and not is_saved_output("ses_keep", first)
    assert is_saved_output("ses_keep", second) and is_saved_output("ses_keep", third)


def test_the_saved_outputs_go_when_the_process_ends() -> None:
    script = (
        "from agentls.tools.support.outputs import SavedOutput\n"
        "out = SavedOutput('ses_exit', 'bash-call', 1)\n"
        "out.feed(b'0123456789')\n"
        "print(out.close())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    path = Path(done.stdout.strip())
    assert path.name.startswith("bash-call-") and not path.exists()
    assert not path.parent.exists()  # the session's folder, left empty, too
