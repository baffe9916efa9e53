"""The workspace folders: every folder of a multi-root workspace is inside the workspace.

The first folder is the primary one: sessions are stored under it, bash runs in it, and its
config gives the session-wide settings (docs/configuration.md). A path in any folder is inside;
each folder's own config gives the permission rules of the paths in it (session/policy.py).

Tools name files relative to their folder. With one folder that is all ("src/app.py"); with
several, the folder's name comes first ("api/src/app.py"), and a path argument starting with a
folder's name is read in that folder (one that does not is read in the first folder).

The set changes while the server runs (workspace/didChangeWorkspaceFolders): one Folders object
is shared by everything that asks, and changed in place. The primary folder stays for the life
of the agent: a change that removes it is ignored (the session store is under it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Folder:
    """One workspace folder: its name (unique in the workspace) and its real path."""

    name: str
    root: Path


def _clean_name(name: str | None, root: Path) -> str:
    """A folder's name as a path's first segment: the editor's name when it is one, else the
    directory's name."""
    candidate = (name or "").strip()
    if not candidate or "/" in candidate or "\\" in candidate or candidate in (".", ".."):
        candidate = root.name or "root"
    return candidate


def name_folders(entries: Sequence[tuple[str | None, Path | str]]) -> list[Folder]:
    """Folders of (name, path) pairs: real paths, duplicates dropped, names made unique
    ("app", "app-2")."""
    out: list[Folder] = []
    seen_roots: set[Path] = set()
    taken: set[str] = set()
    for name, path in entries:
        root = Path(os.path.realpath(path))
        if root in seen_roots:
            continue
        seen_roots.add(root)
        base = _clean_name(name, root)
        unique, n = base, 2
        while unique.lower() in taken:
            unique, n = f"{base}-{n}", n + 1
        taken.add(unique.lower())
        out.append(Folder(unique, root))
    return out


class Folders:
    """The workspace's folders, the primary first; shared and changed in place."""

    def __init__(self, folders: Sequence[Folder]) -> None:
        if not folders:
            raise ValueError("a workspace needs at least one folder")
        self._folders: list[Folder] = list(folders)
        self.primary = self._folders[0]
        # The settings of each folder but the first, from its own config (agentls.config.Settings,
        # set by the front end): its path rules and language servers.
        self.settings: dict[Path, Any] = {}

    @classmethod
    def single(cls, root: Path | str) -> Folders:
        root = Path(os.path.realpath(root))
        return cls([Folder(root.name or "root", root)])

    @classmethod
    def of(cls, entries: Sequence[tuple[str | None, Path | str]]) -> Folders:
        return cls(name_folders(entries))

    # ---- the set ----------------------------------------------------------------------------

    @property
    def all(self) -> list[Folder]:
        return list(self._folders)

    @property
    def roots(self) -> list[Path]:
        return [f.root for f in self._folders]

    @property
    def others(self) -> list[Folder]:
        """Every folder but the primary."""
        return self._folders[1:]

    @property
    def several(self) -> bool:
        return len(self._folders) > 1

    def change(
        self,
        added: Sequence[tuple[str | None, Path | str]],
        removed: Sequence[Path | str],
    ) -> list[str]:
        """Apply a workspace/didChangeWorkspaceFolders event; returns what was not done and why
        (the primary folder is never removed)."""
        problems: list[str] = []
        gone = {Path(os.path.realpath(p)) for p in removed}
        if self.primary.root in gone:
            problems.append(
                f"{self.primary.root} is the first workspace folder, where the sessions are "
                "kept: it stays in the workspace until the server restarts"
            )
            gone.discard(self.primary.root)
        kept: list[tuple[str | None, Path | str]] = [
            (f.name, f.root) for f in self._folders if f.root not in gone
        ]
        self._folders = name_folders([*kept, *added])
        return problems

    def replace(self, folders: Sequence[Folder]) -> None:
        """Every folder anew (the primary stays first)."""
        entries: list[tuple[str | None, Path | str]] = [(self.primary.name, self.primary.root)]
        entries += [(f.name, f.root) for f in folders]
        self._folders = name_folders(entries)

    # ---- paths ------------------------------------------------------------------------------

    def folder_of(self, path: Path) -> Folder | None:
        """The folder holding `path` (the innermost, when folders nest); None outside all."""
        best: Folder | None = None
        for folder in self._folders:
            if path == folder.root or folder.root in path.parents:
                if best is None or len(folder.root.parts) > len(best.root.parts):
                    best = folder
        return best

    def is_outside(self, path: Path) -> bool:
        return self.folder_of(path) is None

    def inside_name(self, path: Path) -> str | None:
        """The path relative to its folder ("." for the folder itself); None outside."""
        folder = self.folder_of(path)
        if folder is None:
            return None
        return path.relative_to(folder.root).as_posix() or "."

    def relative(self, path: Path) -> str:
        """How a path is shown: relative to its folder, prefixed with the folder's name when
        there are several; absolute outside every folder."""
        folder = self.folder_of(path)
        if folder is None:
            return str(path)
        rel = path.relative_to(folder.root).as_posix()
        if not self.several:
            return rel or "."
        return folder.name if rel in ("", ".") else f"{folder.name}/{rel}"

    def join(self, raw: str) -> Path:
        """A relative path argument as a path: in the folder its first segment names when there
        are several folders, else in the primary one (not resolved: symlinks are followed by
        the caller)."""
        if self.several:
            head, _, rest = raw.replace("\\", "/").partition("/")
            for folder in self._folders:
                if head == folder.name:
                    return folder.root / rest if rest else folder.root
        return self.primary.root / raw

    def describe(self) -> str:
        """The folders for the system prompt, one a line."""
        return "\n".join(f"- {f.name}: {f.root}" for f in self._folders)


def folders_of(workspace: Any) -> Folders:
    """The folders of a workspace: the `folders` of the front end's FileAccess under it (through
    a VerifiedWorkspace's `files`, a session's view's `workspace`, a recording's `_inner`), else
    its root as the only folder."""
    current, depth = workspace, 0
    while current is not None and depth < 8:
        folders = getattr(current, "folders", None)
        if isinstance(folders, Folders):
            return folders
        current = next(
            (
                getattr(current, name)
                for name in ("files", "workspace", "_inner")
                if getattr(current, name, None) is not None
            ),
            None,
        )
        depth += 1
    return Folders.single(workspace.root)


def folders_prompt(folders: Folders) -> str:
    """What the model is told of a workspace of several folders."""
    first = folders.primary.name
    return (
        "<workspace_folders>\nThis workspace has several folders; each is inside the workspace:\n"
        f"{folders.describe()}\n"
        "Tools name a file by its folder's name, then its path in that folder "
        f"({first}/src/app.py); give paths the same way. glob, grep and list without a path "
        f"search every folder; bash runs in the first folder ({first})."
        "\n</workspace_folders>"
    )
