"""How the permission rules see a path in a multi-root workspace (workspace/folders.py).

A path in the first folder is judged as before: by the session-wide rules, then the project's
and the session's grants, on its path relative to that folder. A path in another folder is
judged by that folder's own rules (its config, Policy.folder_rules) on its path relative to
that folder, with that folder's protected paths and git hooks folder; the grants, kept by
relative pattern for the first folder, do not count there, and "always" is not offered for it.
A path outside every folder is judged as outside, by its absolute path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentls.permission.protected import is_protected_path
from agentls.permission.rules import PermissionRules
from agentls.session.policy import Policy
from agentls.workspace.folders import Folders


@dataclass(frozen=True)
class PathScope:
    """What the rules judge a path by."""

    subject: str  # relative to its folder; absolute outside every folder
    outside: bool
    root: Path | None  # its folder (hooks, protected paths); the first folder's outside
    # The rules of its folder; None: the session-wide rules with the grants (first folder,
    # outside).
    rules: PermissionRules | None


def scope_of(folders: Folders, policy: Policy, path: Path) -> PathScope:
    folder = folders.folder_of(path)
    if folder is None:
        return PathScope(str(path), True, folders.primary.root, None)
    subject = path.relative_to(folder.root).as_posix() or "."
    if folder.root == folders.primary.root:
        return PathScope(subject, False, folder.root, None)
    return PathScope(
        subject, False, folder.root, policy.folder_rules.get(folder.root, policy.rules)
    )


def in_other_folder(folders: Folders, path: Path | None) -> bool:
    """Whether `path` is in a workspace folder other than the first."""
    if path is None:
        return False
    folder = folders.folder_of(path)
    return folder is not None and folder.root != folders.primary.root


def kept_from_review(folders: Folders, path: Path) -> bool:
    """Whether review "after" must not apply a change to `path` at once: outside every folder,
    or a protected path of a folder other than the first (session/review.py checks the first's)."""
    folder = folders.folder_of(path)
    if folder is None:
        return True
    if folder.root == folders.primary.root:
        return False
    return is_protected_path(path.relative_to(folder.root).as_posix(), folder.root)
