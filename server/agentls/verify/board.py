"""Diagnostics an editor pushes (agent/diagnostics), kept per uri, and waiting for the push that
answers an edit: the editor's before and after of an edit.

The wait ends as soon as there is nothing left to wait for: once a push for the edited document's
new version (or, without versions, any push after the edit) has come and no other has followed for
SETTLE_S. A file type (languageId or extension) the editor has pushed nothing for in this session
is probably checked by no language server at all: it is waited for only UNHEARD_TYPE_WAIT_S."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

# After the push that answers an edit, how long no further push must come before it is taken.
SETTLE_S = 0.05
# How long to wait for diagnostics of a file type the editor has not pushed any for yet.
UNHEARD_TYPE_WAIT_S = 0.1


def file_type_keys(uri: str, language_id: str | None) -> set[str]:
    """What a document's file type is known by: its languageId (when the editor said it) and its
    extension (or its name, for a file without one: Makefile)."""
    path = PurePosixPath(unquote(urlparse(uri).path))
    keys = {"ext:" + (path.suffix.lower() or path.name)}
    if language_id:
        keys.add("lang:" + language_id)
    return keys


@dataclass
class Pushed:
    """The latest diagnostics a client pushed for one uri."""

    version: int | None
    diagnostics: list[dict[str, Any]]
    seq: int


@dataclass
class DiagnosticsBoard:
    """Diagnostics pushed by the client (agent/diagnostics), the file types they came for, and a
    way to wait for the push that answers an edit."""

    pushed: dict[str, Pushed] = field(default_factory=dict)
    heard_types: set[str] = field(default_factory=set)
    _seq: int = 0
    _changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def push(
        self,
        uri: str,
        version: int | None,
        diagnostics: list[dict[str, Any]],
        language_id: str | None = None,
    ) -> None:
        self._seq += 1
        self.pushed[uri] = Pushed(version, diagnostics, self._seq)
        self.heard_types |= file_type_keys(uri, language_id)
        async with self._condition():
            self._condition().notify_all()

    def current(self, uri: str) -> Pushed | None:
        return self.pushed.get(uri)

    def heard_from(self, uri: str, language_id: str | None) -> bool:
        """Whether the editor has pushed diagnostics for this file's type in this session."""
        return not file_type_keys(uri, language_id).isdisjoint(self.heard_types)

    async def wait_settled(
        self,
        uri: str,
        seq: int,
        min_version: int | None,
        wait_s: float,
        settle_s: float = SETTLE_S,
    ) -> Pushed | None:
        """The push that answers an edit of uri: the first one newer than `seq` (of at least
        `min_version`, when both sides know versions; an older version is stale), then the latest
        of any that follow it less than `settle_s` apart. None when none comes within `wait_s`;
        the whole wait stays within `wait_s`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        answer: Pushed | None = None
        after = seq

        def fresh() -> bool:
            p = self.pushed.get(uri)
            if p is None or p.seq <= after:
                return False
            return min_version is None or p.version is None or p.version >= min_version

        condition = self._condition()
        async with condition:
            while True:
                remaining = deadline - loop.time()
                limit = remaining if answer is None else min(settle_s, remaining)
                if limit <= 0:
                    return answer
                try:
                    await asyncio.wait_for(condition.wait_for(fresh), limit)
                except TimeoutError:
                    return answer
                answer = self.pushed[uri]
                after = answer.seq
