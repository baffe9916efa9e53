"""Waiting in tests for something another process or task does: until a condition holds, bounded
by time (generous: a loaded CI machine is slow), never by a count of tries nor a fixed sleep."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

# Long enough for anything a test waits for on a loaded 2-core machine; short of pytest's timeout.
BOUND_S = 60.0


async def until(check: Callable[[], object], what: str, timeout: float = BOUND_S) -> None:
    """Returns once check() is true; fails the test naming `what` when it is not within timeout
    seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(0.02)
