"""Tools under abuse, through the whole loop (real SDK, local API server, real SQLite, real bash
and ripgrep): each call ends with a result the model can read, the server's memory stays bounded,
no process is left behind, the stored history stays valid for the next request, and nothing of
the user's is overwritten."""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentls.history import ToolPart
from agentls.permission.broker import Answer
from agentls.session import AskContext
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import Harness, HarnessFactory
from tests.reliability.support import Figures

ALLOW = {"permissions": {"*": "allow"}}
MB = 1024 * 1024


def marker() -> str:
    return "agentls-abuse-" + uuid.uuid4().hex[:10]


def processes_named(name: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if name.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def reset_peak_rss() -> int:
    """Reset this process's VmHWM to its current RSS (Linux: clear_refs 5); returns RSS in KB."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status("VmRSS")


def peak_rss_kb() -> int:
    return _status("VmHWM")


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


async def one_call(
    h: Harness, api: MessagesAPIServer, name: str, tool_input: dict[str, Any]
) -> ToolPart:
    """A turn with one tool call, then a closing text; returns the stored call."""
    api.enqueue(reply(tool_use(name, tool_input)), reply(text("noted")))
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, f"{name} abuse")
    assert result.finish_reason == "end_turn", result.error
    loaded = await h.store.load_messages(session.id)
    (part,) = loaded[1].tool_parts()
    assert part.finished
    # The history, with this result in it, is accepted by the API on the next request.
    api.enqueue(reply(text("still fine")))
    again = await h.agent.prompt(session.id, "next")
    assert again.text == "still fine"
    h.accepted_requests()
    return part


Case = Callable[[Harness, MessagesAPIServer], Any]


async def bash_never_ends(h: Harness, api: MessagesAPIServer) -> None:
    name = marker()
    part = await one_call(
        h, api, "bash", {"command": f"exec -a {name} sleep 1000", "timeout_ms": 300}
    )
    assert part.status == "error" and "timed out after 300 ms" in (part.output or "")
    assert processes_named(name) == []


async def bash_forks_children(h: Harness, api: MessagesAPIServer) -> None:
    name = marker()
    command = (
        f"(exec -a {name} sleep 1000) & (exec -a {name} sleep 1000) & "
        f"bash -c 'exec -a {name} sleep 1000' & echo forked; wait"
    )
    part = await one_call(h, api, "bash", {"command": command, "timeout_ms": 400})
    assert "forked" in (part.output or "") and "timed out" in (part.output or "")
    assert processes_named(name) == []


async def warm_up(h: Harness, api: MessagesAPIServer) -> None:
    """One turn first, so that what is measured next is not the SDK's first import."""
    await one_call(h, api, "list", {})


async def bash_prints_50_mb(h: Harness, api: MessagesAPIServer) -> None:
    await warm_up(h, api)
    base = reset_peak_rss()
    part = await one_call(h, api, "bash", {"command": "yes 0123456789abcdef | head -c 50000000"})
    output = part.output or ""
    assert len(output) < 70_000 and "output omitted" in output
    assert "Exit code: 0" in output
    grew = peak_rss_kb() - base
    assert grew < 40 * 1024, f"the server's memory grew by {grew} KB for 50 MB of output"


async def bash_reads_stdin(h: Harness, api: MessagesAPIServer) -> None:
    part = await one_call(h, api, "bash", {"command": "cat; read line; echo read-returned $?"})
    assert "read-returned 1" in (part.output or "")


async def binary_file(h: Harness, api: MessagesAPIServer) -> None:
    garbage = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)) * 4
    (h.root / "blob.bin").write_bytes(garbage)
    part = await one_call(h, api, "read", {"path": "blob.bin"})
    assert part.status == "error" and "binary" in (part.output or "")
    # Named as an image, it is read as one: a broken one is said as such.
    (h.root / "image.png").write_bytes(garbage)
    part = await one_call(h, api, "read", {"path": "image.png"})
    assert part.status == "error" and "not an image" in (part.output or "")


async def file_of_200_mb(h: Harness, api: MessagesAPIServer) -> None:
    big = h.root / "big.log"
    with open(big, "wb") as f:
        f.write(b"a line of text\n" * 1000)
        f.truncate(200 * MB)  # sparse: the rest reads as NUL bytes
    await warm_up(h, api)
    base = reset_peak_rss()
    part = await one_call(h, api, "read", {"path": "big.log", "offset": 10, "limit": 5})
    assert part.status == "completed" and "a line of text" in (part.output or "")
    assert "large" in (part.output or "")
    grew = peak_rss_kb() - base
    assert grew < 40 * 1024, f"reading a page of a 200 MB file grew memory by {grew} KB"
    part = await one_call(h, api, "grep", {"pattern": "line of", "path": "big.log"})
    assert part.status == "completed"
    # edit and write would hold the file several times over: they refuse it, without reading it.
    base = reset_peak_rss()
    for name, tool_input in (
        ("edit", {"path": "big.log", "old_string": "a line of text", "new_string": "changed"}),
        ("write", {"path": "big.log", "content": "small now\n"}),
    ):
        part = await one_call(h, api, name, tool_input)
        assert part.status == "error" and "too large" in (part.output or ""), part.output
    grew = peak_rss_kb() - base
    assert grew < 40 * 1024, f"refusing to edit a 200 MB file grew memory by {grew} KB"
    assert big.stat().st_size == 200 * MB


async def deleted_between_read_and_edit(h: Harness, api: MessagesAPIServer) -> None:
    path = h.root / "gone.py"
    path.write_text("x = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "gone.py"})),
        reply(tool_use("edit", {"path": "gone.py", "old_string": "x = 1", "new_string": "x = 2"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()
    removed = asyncio.Event()

    def on_event(event: Any) -> None:
        if event.type == "tool-result" and event.tool == "read" and not removed.is_set():
            path.unlink()
            removed.set()

    unsubscribe = h.agent.subscribe(on_event)
    try:
        result = await h.agent.prompt(session.id, "edit it")
    finally:
        unsubscribe()
    assert result.finish_reason == "end_turn"
    loaded = await h.store.load_messages(session.id)
    edit = loaded[2].tool_parts()[0]
    assert edit.status == "error" and "not found" in (edit.output or "")
    assert not path.exists()
    h.accepted_requests()


async def changed_between_read_and_edit(h: Harness, api: MessagesAPIServer) -> None:
    path = h.root / "moving.py"
    path.write_text("a = 1\nb = 2\n")
    api.enqueue(
        reply(tool_use("read", {"path": "moving.py"})),
        reply(
            tool_use("edit", {"path": "moving.py", "old_string": "a = 1", "new_string": "a = 9"})
        ),
        reply(tool_use("write", {"path": "moving.py", "content": "overwritten\n"})),
        reply(text("done")),
    )
    session = await h.agent.new_session()

    def on_event(event: Any) -> None:
        if event.type == "tool-result" and event.tool == "read":
            path.write_text("a = 1\nb = 3  # the user's change\n")

    unsubscribe = h.agent.subscribe(on_event)
    try:
        await h.agent.prompt(session.id, "edit it")
    finally:
        unsubscribe()
    loaded = await h.store.load_messages(session.id)
    edit = loaded[2].tool_parts()[0]
    write = loaded[3].tool_parts()[0]
    # edit applies (old_string still matches once) and says the file had changed; the user's
    # change is kept. write of the whole file is refused, so it cannot erase it.
    assert edit.status == "completed" and "changed since you last read it" in (edit.output or "")
    assert write.status == "error" and "changed since you last read it" in (write.output or "")
    assert path.read_text() == "a = 9\nb = 3  # the user's change\n"
    h.accepted_requests()


async def changed_while_waiting_for_approval(h: Harness, api: MessagesAPIServer) -> None:
    path = h.root / "approve.py"
    path.write_text("v = 1\n")
    api.enqueue(
        reply(tool_use("read", {"path": "approve.py"})),
        reply(
            tool_use("edit", {"path": "approve.py", "old_string": "v = 1", "new_string": "v = 2"})
        ),
        reply(text("done")),
    )

    async def asker(ctx: AskContext) -> Answer:
        # While the user looks at the diff, they change the file themselves; then they approve.
        path.write_text("v = 1\nw = 'typed while the question was open'\n")
        return Answer("once")

    h.agent.asker = asker
    h.agent.update_settings(h.agent.settings.merged({"permissions": {"edit": "ask"}}))
    try:
        session = await h.agent.new_session()
        await h.agent.prompt(session.id, "edit it")
    finally:
        h.agent.update_settings(h.agent.settings.merged(ALLOW))
    loaded = await h.store.load_messages(session.id)
    edit = loaded[2].tool_parts()[0]
    assert edit.status == "error" and "changed" in (edit.output or ""), edit.output
    assert path.read_text() == "v = 1\nw = 'typed while the question was open'\n"
    h.accepted_requests()


async def directory_instead_of_file(h: Harness, api: MessagesAPIServer) -> None:
    (h.root / "adir").mkdir()
    for name, tool_input in (
        ("read", {"path": "adir"}),
        ("edit", {"path": "adir", "old_string": "a", "new_string": "b"}),
        ("write", {"path": "adir", "content": "x"}),
    ):
        part = await one_call(h, api, name, tool_input)
        assert part.status == "error" and "directory" in (part.output or ""), part.output
    assert (h.root / "adir").is_dir()


async def non_utf8_names_and_contents(h: Harness, api: MessagesAPIServer) -> None:
    root = bytes(h.root)
    with open(os.path.join(root, b"caf\xe9.txt"), "wb") as f:
        f.write(b"caf\xe9 au lait\n")
    with open(os.path.join(root, b"latin.txt"), "wb") as f:
        f.write(b"na\xefve text\n")
    with open(os.path.join(root, b"new\nline.txt"), "wb") as f:
        f.write(b"newline in the name\n")
    for name, tool_input in (
        ("list", {}),
        ("glob", {"pattern": "*.txt"}),
        ("grep", {"pattern": "au lait|na.ve|newline"}),
        ("read", {"path": "latin.txt"}),
        ("bash", {"command": "ls; cat latin.txt"}),
    ):
        part = await one_call(h, api, name, tool_input)
        assert part.output, name
    part = await one_call(h, api, "read", {"path": "latin.txt"})
    assert part.status == "error" and "UTF-8" in (part.output or "")


CASES: dict[str, Case] = {
    "bash that never ends (timeout)": bash_never_ends,
    "bash that forks children": bash_forks_children,
    "bash that prints 50 MB": bash_prints_50_mb,
    "bash that reads stdin": bash_reads_stdin,
    "a binary file": binary_file,
    "a 200 MB file (read a page, grep, edit, write)": file_of_200_mb,
    "a file deleted between read and edit": deleted_between_read_and_edit,
    "a file changed between read and edit/write": changed_between_read_and_edit,
    "a file changed while its edit waited for approval": changed_while_waiting_for_approval,
    "a directory where a file was expected": directory_instead_of_file,
    "non-UTF-8 and newline names, non-UTF-8 contents": non_utf8_names_and_contents,
}


@pytest.mark.parametrize("case", list(CASES))
async def test_tool_abuse(
    make_harness: HarnessFactory, api: MessagesAPIServer, figures: Figures, case: str
) -> None:
    with figures.case(f"Tools: {case}"):
        h = await make_harness(ALLOW)
        await CASES[case](h, api)


def test_no_sleepers_left_behind() -> None:
    """Whatever the cases above started is gone (a belt-and-braces sweep)."""
    leftover = subprocess.run(
        ["pgrep", "-f", "agentls-abuse-"], capture_output=True, text=True, check=False
    ).stdout.split()
    assert leftover == [], leftover
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0
