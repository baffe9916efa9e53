"""The heap policy: when the garbage collector's long-lived objects are frozen (gc.freeze).

A long session keeps its history in memory (5,000 messages: 50,000 objects the collector tracks),
and the process its modules (the SDK, pydantic, lsprotocol: 200,000 more). A full collection
scans all of them, 100 to 200 ms here, and building a large request (the SDK copies the whole
history) triggers one about every step. So the long-lived objects are moved out of its reach with
gc.freeze(): at the start of each turn (after a collection of what is not frozen yet, so that the
garbage of the previous turn goes first) and at the end of a session's load. A full collection
then scans only what was made since.

The trade-off: an object alive at a freeze is never examined by the collector again. Freed by its
reference count it goes as usual (the history, its API form, messages dropped by a compaction,
requests); only one that later dies in a reference cycle stays until the process ends. Hence the
freezing points: the start of a turn, before the turn's own objects exist, when what is alive is
the process's long-lived state (modules, sessions, their histories and caches), and the end of a
load, which is quick; and neither while a turn is running (in any session: its objects, a turn and
its compactor, the SDK's stream, die in cycles). A process always running some turn keeps the
collector's default behaviour for what it makes then.

The collector is one per process, so is its policy: HEAP, shared by every Agent.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class HeapPolicy:
    """Freezes the heap at the start of turns and the end of loads, never during a turn."""

    def __init__(self) -> None:
        # Whether the heap was frozen yet (gc.get_freeze_count() would say, but it counts the
        # frozen objects one by one: 20 ms for 250,000).
        self.frozen = False
        self.loads_pausing = 0  # how many collector_paused() blocks are running
        self.turns_running = 0  # how many turns are running, in every Agent of the process

    def freeze(self) -> None:
        """Collect what is not frozen yet, then freeze everything alive; not while a turn is
        running. The first freeze of the process does not collect: that would scan the whole
        heap (100 ms or more), for the little garbage that startup leaves."""
        if not gc.isenabled() or self.turns_running:
            return  # whoever disabled the collector manages it (or a load is under way)
        if self.frozen:
            gc.collect()
        gc.freeze()
        self.frozen = True

    @contextmanager
    def collector_paused(self) -> Iterator[None]:
        """No collection during the block, everything alive at its end frozen (without a
        collection; and not while a turn is running). For a session's load: the tens of
        thousands of objects it builds all survive, so collecting among them as they come is
        wasted time. Blocks may overlap (two sessions loading): the collector comes back when the
        last one ends. A collector already disabled by someone else is left alone."""
        if not self.loads_pausing and not gc.isenabled():
            yield
            return
        self.loads_pausing += 1
        gc.disable()
        try:
            yield
        finally:
            self.loads_pausing -= 1
            if not self.loads_pausing:
                if not self.turns_running:
                    gc.freeze()
                    self.frozen = True
                gc.enable()

    @contextmanager
    def turn_running(self) -> Iterator[None]:
        """A turn runs during the block: no freezing meanwhile."""
        self.turns_running += 1
        try:
            yield
        finally:
            self.turns_running -= 1


HEAP = HeapPolicy()
collector_paused = HEAP.collector_paused
