"""Real git repositories for the tests of background sessions and their worktrees: git run with a
fixed author, and a repository on branch main whose first commit holds the files given."""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT = ("git", "-c", "user.name=Test", "-c", "user.email=test@example.com")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def committed_repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository at root (made if missing) on branch main, one commit holding `files`
    (relative path -> text)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "--quiet", "-b", "main")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", ".")
    git(root, "commit", "--quiet", "-m", "first")
    return root
