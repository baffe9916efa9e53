"""The language servers agentls starts itself, per workspace folder (workspace/folders.py): a
file is answered by the servers of the folder that holds it, started in that folder, from that
folder's own `languageServers` (its config's; the first folder's settings where it has none).
Workspace-wide requests (workspace/symbol) and files outside every folder go to the first
folder's servers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentls.config import Settings
from agentls.language.client import ReadText
from agentls.language.headless import HeadlessLanguages
from agentls.workspace.folders import Folders


class FolderLanguages(HeadlessLanguages):
    """The first folder's HeadlessLanguages, and one more per other folder, made at the first
    request for a file there."""

    def __init__(
        self, folders: Folders, settings: Callable[[], Settings], read_text: ReadText
    ) -> None:
        super().__init__(folders.primary.root, settings, read_text)
        self.folders = folders
        self._first_settings = settings
        self._folder_read_text = read_text
        self._others: dict[Path, HeadlessLanguages] = {}

    def _settings_of(self, root: Path) -> Callable[[], Settings]:
        def settings() -> Settings:
            own = self.folders.settings.get(root)
            return own if isinstance(own, Settings) else self._first_settings()

        return settings

    def _other(self, path: Path | None) -> HeadlessLanguages | None:
        """The servers of the folder holding `path` when that is not the first; None otherwise."""
        folder = self.folders.folder_of(path) if path is not None else None
        if folder is None or folder.root == self.folders.primary.root:
            return None
        if folder.root not in self._others:
            self._others[folder.root] = HeadlessLanguages(
                folder.root, self._settings_of(folder.root), self._folder_read_text
            )
        return self._others[folder.root]

    def methods(self, path: Path | None) -> frozenset[str]:
        other = self._other(path)
        return other.methods(path) if other is not None else super().methods(path)

    async def request(self, method: str, params: dict[str, Any], path: Path | None) -> Any:
        other = self._other(path)
        if other is not None:
            return await other.request(method, params, path)
        return await super().request(method, params, path)

    def pids(self) -> list[int]:
        return [*super().pids(), *(pid for o in self._others.values() for pid in o.pids())]

    async def aclose(self) -> None:
        for other in self._others.values():
            await other.aclose()
        await super().aclose()
