"""Instructions: the user's standing instructions (AGENTS.md, else CLAUDE.md) in the system prompt.

Two places are read: the user's global file in the config home (~/.config/agentls/AGENTS.md)
and the project's at the workspace root. The text is cached; a watchfiles watcher on both
directories marks it stale when an instructions file changes, and each read also compares the files'
stat (mtime, size, inode) so an edit is seen by the very next step even before the watcher
reports it. The text changes only when a file's content really changed, so the system prompt's
bytes (and the prompt cache) stay the same from step to step otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from agentls.workspace.folders import Folders, folders_of, folders_prompt

log = logging.getLogger(__name__)

INSTRUCTIONS_FILENAMES = ("AGENTS.md", "CLAUDE.md")
# An instructions file larger than this is cut (with a note): it is sent with every request.
MAX_INSTRUCTIONS_CHARS = 100_000

_StatKey = tuple[int, int, int] | None


def _stat_key(path: Path) -> _StatKey:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class Instructions:
    """The instructions text for one workspace, kept current by a watcher started on first use."""

    def __init__(self, root: Path | Any, global_dir: Path | None, *, watch: bool = True) -> None:
        # `root`: the workspace root, or the workspace (each of its folders' AGENTS.md counts,
        # the first's first: workspace/folders.py).
        self.folders = Folders.single(root) if isinstance(root, Path) else folders_of(root)
        self.root = self.folders.primary.root
        # Without the watcher (a one-shot CLI run, which would spend more importing watchfiles
        # than the run lasts), the stat comparison in text() alone notices edits.
        self.watch = watch
        self.global_dir = global_dir
        self._keys: dict[Path, _StatKey] = {}
        self._texts: dict[Path, str] = {}
        self._text: str | None = None
        self._stale = True
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self.reloads = 0  # how many times the files were read again (for tests and logs)
        self.changes = 0  # how many times the watcher reported a change
        self.watching = asyncio.Event()  # set once the watcher is in place

    # ---- what the model sees --------------------------------------------------------------

    def directories(self) -> list[tuple[str, Path]]:
        """(scope, directory): "user", then "project" for each workspace folder."""
        out: list[tuple[str, Path]] = []
        if self.global_dir is not None:
            out.append(("user", self.global_dir))
        out.append(("project", self.root))
        out += [("project", folder.root) for folder in self.folders.others]
        return out

    def files(self) -> list[tuple[str, Path]]:
        """The instructions file in effect in each place: AGENTS.md, else CLAUDE.md."""
        found: list[tuple[str, Path]] = []
        for scope, directory in self.directories():
            for name in INSTRUCTIONS_FILENAMES:
                candidate = directory / name
                if candidate.is_file():
                    found.append((scope, candidate))
                    break
        return found

    def _candidates(self) -> list[Path]:
        return [
            directory / name
            for _, directory in self.directories()
            for name in INSTRUCTIONS_FILENAMES
        ]

    def text(self) -> str | None:
        """The instructions as one system prompt block (None when there are none). Cheap when nothing
        changed: a few stat calls."""
        keys = {path: _stat_key(path) for path in self._candidates()}
        if not self._stale and keys == self._keys:
            return self._text
        self._stale = False
        self._keys = keys
        self.reloads += 1
        sections: list[str] = []
        for scope, path in self.files():
            try:
                with path.open(encoding="utf-8", errors="replace") as handle:
                    content = handle.read(MAX_INSTRUCTIONS_CHARS + 1)
            except OSError as exc:
                log.warning("cannot read instructions file %s: %s", path, exc)
                continue
            if len(content) > MAX_INSTRUCTIONS_CHARS:
                content = content[:MAX_INSTRUCTIONS_CHARS] + "\n[... cut: the file is too long]"
            content = content.strip()
            if not content:
                continue
            where = path.name if scope == "project" else str(path)
            label = "the project's" if scope == "project" else "the user's global"
            if scope == "project" and self.folders.several:  # say which folder's
                where = self.folders.relative(path)
                label = f"the workspace folder {where.split('/')[0]}'s"
            sections.append(
                f'<instructions source="{where}">\n({label} instructions)\n{content}\n</instructions>'
            )
        self._text = (
            "Instructions from the user's AGENTS.md / CLAUDE.md files. Follow them; when they conflict, the "
            "project's file wins over the global one, and the user's messages win over both.\n\n"
            + "\n\n".join(sections)
            if sections
            else None
        )
        return self._text

    def system(self, base: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The system prompt blocks for a step: base, then the instructions as their own block."""
        self.start()
        text = self.text()
        if self.folders.several:  # which folders there are, and how tools name their files
            base = [*base, {"type": "text", "text": folders_prompt(self.folders)}]
        if text is None:
            return base
        return [*base, {"type": "text", "text": text}]

    # ---- the watcher ----------------------------------------------------------------------

    def start(self) -> None:
        """Start watching (once, and only inside a running event loop)."""
        if self._task is not None or not self.watch:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._stop = asyncio.Event()
        self._task = loop.create_task(self._watch(self._stop), name="agentls-instructions-watcher")

    async def _watch(self, stop: asyncio.Event) -> None:
        try:
            from watchfiles import awatch
        except ImportError:  # pragma: no cover - a declared dependency
            return
        directories = [d for _, d in self.directories() if d.is_dir()]
        if not directories:
            return
        wanted = {os.path.normcase(str(p)) for p in self._candidates()}

        def only_instructions(_change: Any, path: str) -> bool:
            return os.path.normcase(path) in wanted

        try:
            # yield_on_timeout: an empty batch after rust_timeout ms says the watch is in place.
            async for changes in awatch(
                *directories,
                watch_filter=only_instructions,
                recursive=False,
                stop_event=stop,
                debounce=200,
                step=20,
                rust_timeout=250,
                yield_on_timeout=True,
            ):
                self.watching.set()
                if changes:
                    self._stale = True
                    self.changes += 1
        except asyncio.CancelledError:
            raise
        except Exception:  # the stat comparison still notices edits
            log.warning(
                "cannot watch the instructions files; edits are seen on the next step",
                exc_info=True,
            )

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._stop is not None:
            self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 2)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
