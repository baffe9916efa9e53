"""Diagnostics an editor pushes (agent/diagnostics), kept per uri, and a way to wait for the next
push: the editor's before and after of an edit."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Pushed:
    """The latest diagnostics a client pushed for one uri."""

    version: int | None
    diagnostics: list[dict[str, Any]]
    seq: int


@dataclass
class DiagnosticsBoard:
    """Diagnostics pushed by the client (agent/diagnostics), and a way to wait for the next push."""

    pushed: dict[str, Pushed] = field(default_factory=dict)
    _seq: int = 0
    _changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def push(self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        self._seq += 1
        self.pushed[uri] = Pushed(version, diagnostics, self._seq)
        async with self._condition():
            self._condition().notify_all()

    def current(self, uri: str) -> Pushed | None:
        return self.pushed.get(uri)

    async def wait_after(
        self, uri: str, seq: int, min_version: int | None, wait_s: float
    ) -> Pushed | None:
        """The first push for uri newer than `seq` (and at least `min_version`), or None."""

        def ready() -> bool:
            p = self.pushed.get(uri)
            if p is None or p.seq <= seq:
                return False
            return min_version is None or p.version is None or p.version >= min_version

        condition = self._condition()
        try:
            async with condition:
                await asyncio.wait_for(condition.wait_for(ready), wait_s)
        except TimeoutError:
            return None
        return self.pushed.get(uri)
