"""A repository's special files (a FIFO named like a picture or a note): neither the image path, a
command's @path nor the read tool opens one, and a command's @path reads no more than it attaches.
Each attack is counted in the security table (tests/security/conftest.py)."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.session import CommandError
from agentls.session.images import ImageRefused, file_image
from agentls.session.policy import Policy
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.conftest import HarnessFactory
from tests.security.conftest import SecurityFigures

SPECIAL = "special file (FIFO) read"


class FifoWatch:
    """Tells whether anyone opened the FIFO to read while it ran: it opens the FIFO's write end
    without blocking (which fails with ENXIO while there is no reader) until stopped, and closes
    it at once when it could (so a reader stuck in open() gets EOF and the test goes on)."""

    def __init__(self, fifo: Path) -> None:
        self.fifo = fifo
        self.reader_seen = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.01):
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno == errno.ENXIO:
                    continue
                raise
            self.reader_seen = True
            os.close(fd)

    def __enter__(self) -> FifoWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


# ---- images and @paths: a repository's FIFO named like a picture or a note ----------------------


def test_a_fifo_named_png_is_refused_without_being_opened(
    tmp_path: Path, security_figures: SecurityFigures
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.mkfifo(root / "shot.png")
    policy = Policy(Settings.model_validate({"model": "m"}), str(root))
    with security_figures.attempt(SPECIAL), FifoWatch(root / "shot.png") as watch:
        with pytest.raises(ImageRefused, match="not a regular file"):
            file_image((root / "shot.png").as_uri(), root, policy, [])
    assert not watch.reader_seen


async def test_a_commands_at_path_to_a_fifo_neither_blocks_nor_is_attached(
    make_harness: HarnessFactory,
    api: MessagesAPIServer,
    _isolated_config_home: Path,
    security_figures: SecurityFigures,
) -> None:
    h = await make_harness()
    commands = _isolated_config_home / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS")
    os.mkfifo(h.root / "notes.md")
    session = await h.agent.new_session()
    with security_figures.attempt(SPECIAL), FifoWatch(h.root / "notes.md") as watch:
        # Read on the event loop before the fix: the whole server hung until a writer came.
        with pytest.raises(CommandError, match="not a regular file"):
            await h.agent.prompt(session.id, "/review @notes.md")
    assert not watch.reader_seen
    assert api.requests == []


async def test_a_commands_at_path_reads_no_more_than_it_attaches(
    make_harness: HarnessFactory, api: MessagesAPIServer, _isolated_config_home: Path
) -> None:
    h = await make_harness()
    commands = _isolated_config_home / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Review $ARGUMENTS")
    # Multi-byte characters across the cut: the prefix read is still decoded whole.
    (h.root / "big.txt").write_text("é" * 300_000)
    api.enqueue(reply(text("ok")))
    session = await h.agent.new_session()
    await h.agent.prompt(session.id, "/review @big.txt")
    body = h.accepted_requests()[0]
    sent = "\n".join(
        b.get("text", "") for b in body["messages"][-1]["content"] if isinstance(b, dict)
    )
    assert "é" * 1000 in sent and "... (cut)" in sent
    assert "é" * 200_001 not in sent


async def test_the_read_tool_opens_no_fifo_named_like_an_image(
    make_harness: HarnessFactory, api: MessagesAPIServer, security_figures: SecurityFigures
) -> None:
    h = await make_harness()
    os.mkfifo(h.root / "shot.png")
    api.enqueue(reply(tool_use("read", {"path": "shot.png"})), reply(text("seen")))
    session = await h.agent.new_session()
    with security_figures.attempt(SPECIAL), FifoWatch(h.root / "shot.png") as watch:
        await asyncio.wait_for(h.agent.prompt(session.id, "look"), 30)
    assert not watch.reader_seen
    [result] = [
        b for b in h.accepted_requests()[1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    assert result["is_error"]
