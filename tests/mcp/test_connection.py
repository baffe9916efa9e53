"""One MCP server's connection: a start left by a cancelled turn fails quietly (its failure is
the server's status, never an unretrieved future's traceback)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from typing import Any

from agentls.mcp.config import StdioServer
from agentls.mcp.connection import Connection


async def test_a_start_whose_turn_was_cancelled_fails_without_an_unretrieved_exception() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    # A "server" that never answers initialize: its start times out.
    connection = Connection(
        StdioServer(name="mute", command="sleep", args=("60",), start_timeout_s=0.5)
    )
    turn = asyncio.create_task(connection.start())
    while connection._task is None:
        await asyncio.sleep(0.01)
    running = connection._task
    turn.cancel()  # the turn is cancelled while the server starts
    with contextlib.suppress(asyncio.CancelledError):
        await turn
    await asyncio.wait([running])  # the start goes on in its own task, and times out
    await connection.stop()
    del turn, running
    gc.collect()
    await asyncio.sleep(0)
    assert [c.get("message") for c in reported] == []
