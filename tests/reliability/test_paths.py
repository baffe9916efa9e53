"""Hostile paths through the real loop and its path checks (CallContext): `..`, absolute paths,
`~`, symlinks out of the workspace, paths through a symlinked directory, device files, FIFOs,
names with newlines or NUL bytes, and glob/grep patterns that climb out. None escapes: nothing
outside the workspace is shown, created or changed, even with every tool allowed."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.reliability.support import Figures


def hostile_paths(outside: Path, root: Path) -> list[str]:
    rel = os.path.relpath(outside, root)
    return [
        "../outside/secret.txt",
        f"{rel}/secret.txt",
        "sub/../../outside/secret.txt",
        "./../outside/secret.txt",
        str(outside / "secret.txt"),
        str(outside),
        "/etc/passwd",
        "/proc/self/environ",
        "~/.ssh/id_rsa",
        "/etc/.env",
        str(outside / "server.pem"),
        "link_out.txt",  # -> outside/secret.txt
        "linkdir/secret.txt",  # linkdir -> outside
        "linkdir",
        "sub/link_up/outside/secret.txt",  # sub/link_up -> ../.. (above the workspace)
        "/dev/zero",
        "/dev/stdin",
        "zero",  # -> /dev/zero
        "fifo",
        "../outside/new\nline.txt",
        "new\nline/../../outside/secret.txt",
        "secret.txt\0.py",
        "..",
        "/",
    ]


def calls_for(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read", {"path": path}),
        ("write", {"path": path, "content": "PWNED\n"}),
        ("edit", {"path": path, "old_string": "", "new_string": "PWNED\n"}),
        ("edit", {"path": path, "old_string": "OUTSIDE", "new_string": "PWNED"}),
        ("list", {"path": path}),
        ("glob", {"pattern": "*", "path": path}),
        ("grep", {"pattern": "OUTSIDE|root:|PATH=", "path": path}),
    ]


PATTERN_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("glob", {"pattern": "../*"}),
    ("glob", {"pattern": "../outside/*"}),
    ("glob", {"pattern": "**/../../outside/*"}),
    ("glob", {"pattern": "/etc/*"}),
    ("glob", {"pattern": "linkdir/**"}),
    ("grep", {"pattern": "OUTSIDE", "include": "../**"}),
    ("grep", {"pattern": "OUTSIDE", "include": "linkdir/*"}),
    ("grep", {"pattern": "OUTSIDE"}),
    ("list", {}),
]


async def test_no_path_escapes_the_workspace(
    make_harness: HarnessFactory, api: MessagesAPIServer, tmp_path: Path, figures: Figures
) -> None:
    # Every tool allowed; an ask (which nobody answers here) expires fast and counts as a finding.
    h = await make_harness({"permissions": {"*": "allow"}, "approvalTimeoutS": 1})
    root = h.root
    canary = "OUTSIDE-" + uuid.uuid4().hex
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(canary + "\n")
    (root / "sub").mkdir()
    (root / "inside.txt").write_text("inside\n")
    (root / "link_out.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    (root / "sub" / "link_up").symlink_to("../..")
    (root / "zero").symlink_to("/dev/zero")
    os.mkfifo(root / "fifo")
    before = {p: p.read_bytes() for p in outside.iterdir()}

    calls = [c for path in hostile_paths(outside, root) for c in calls_for(path)]
    calls += PATTERN_CALLS
    # All in one step: the loop runs read-only neighbours together and the rest in order.
    api.enqueue(reply(*(tool_use(name, tool_input) for name, tool_input in calls)))
    api.enqueue(reply(text("done")))
    session = await h.agent.new_session()
    result = await h.agent.prompt(session.id, "escape")
    assert result.finish_reason == "end_turn", result.error
    loaded = await h.store.load_messages(session.id)
    parts = loaded[1].tool_parts()
    assert len(parts) == len(calls)

    escaped: list[str] = [f"asked: {e.title}" for e in h.of_type("permission-request")]
    for part in parts:
        output = part.output or ""
        assert part.finished, part
        if canary in output or "root:x:0" in output or "PATH=" in output:
            escaped.append(f"{part.tool} {part.input}: {output[:200]}")
    # Nothing was created, changed or removed outside.
    after = {p: p.read_bytes() for p in outside.iterdir()}
    assert after == before
    assert not any("PWNED" in p.read_text(errors="replace") for p in tmp_path.glob("*.txt"))
    assert (root / "fifo").exists() and not (root / "fifo").is_file()
    figures.add(
        "Paths: `..`, absolute, `~`, symlinks out, through a symlinked dir, devices, FIFO, "
        "newline/NUL names, climbing globs (read, write, edit, list, glob, grep)",
        len(calls),
        len(calls) - len(escaped),
        note="tried = tool calls; lost = escapes",
    )
    assert escaped == []
    # The stored history, with all these errors in it, is still a valid request.
    api.enqueue(reply(text("ok")))
    await h.agent.prompt(session.id, "next")
    h.accepted_requests()
