"""Files another program runs later: the paths of a workspace whose change can run programs or
widen permissions outside the sandbox and without a question, and the git commands that only read a
repository. One definition, used by the file tools' rules, bash (its redirections, sandboxed or
not), review "after", and the sandbox's mounts (read-only, and a created one moved aside).

Why each is here (docs/security.md says the same for users):
- `.git` (its config and hooks: the editor runs `git status` constantly, the user `git commit`),
  `.gitmodules` and `.gitattributes` (submodule URLs and filters run programs);
- the folder git's `core.hooksPath` names (husky sets `.husky`), and the usual hook folders
  `.husky` and `.githooks` before it is set: the user's next `git commit` runs what is there;
- `.vscode` (tasks.json and launch.json run commands, settings.json names programs the editor
  starts), `.idea` (run configurations), `.devcontainer` (the container's commands run on open);
- `.envrc` (direnv runs it on `cd`), `.pre-commit-config.yaml` (hooks pre-commit installs);
- `.agentls` and `.mcp.json`: agentls's own workspace config (permissions, sandbox) and the MCP
  servers it starts.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# Files and directories of the workspace (at any depth, without regard to case) whose change can
# run programs or widen permissions later. Writing them (write, edit, a bash redirection, sandboxed
# or not) asks even under {"*": "allow"}; the sandbox mounts the ones at the workspace root
# read-only and moves aside one a command creates (tools/support/sandbox.py).
PROTECTED_NAMES: tuple[str, ...] = (
    ".git",
    ".agentls",
    ".vscode",
    ".idea",
    ".devcontainer",
    ".husky",
    ".githooks",
    ".envrc",
    ".mcp.json",
    ".gitmodules",
    ".gitattributes",
    ".pre-commit-config.yaml",
)


# Under a "sandboxed" rule, the git commands that run without a question: those that only read the
# repository. Any other git command (commit, add, config, checkout, init, ...) writes .git, which
# the sandbox mounts read-only, so it asks. `git branch` and `git remote` only as exact listings.
SANDBOXED_GIT_READS: tuple[str, ...] = (
    "git status",
    "git log",
    "git diff",
    "git show",
    "git blame",
    "git grep",
    "git ls-files",
    "git rev-parse",
    "git describe",
    "git shortlog",
)
SANDBOXED_GIT_EXACT: tuple[str, ...] = (
    "git branch",
    "git branch -a",
    "git branch -r",
    "git branch -v",
    "git branch -vv",
    "git branch --list",
    "git branch --show-current",
    "git remote",
    "git remote -v",
)


def is_protected_path(subject: str, root: Path | None = None) -> bool:
    """Whether a workspace-relative path is, or lies inside, a protected path: a component named
    as one of PROTECTED_NAMES (at any depth, without regard to case), or, given the workspace
    root, the folder git's core.hooksPath names there."""
    if any(part.lower() in _PROTECTED for part in subject.split("/")):
        return True
    if root is None:
        return False
    folded = subject.lower().strip("/")
    return any(folded == d or folded.startswith(d + "/") for d in hooks_dirs(root))


def protected_root_paths(root: Path) -> list[Path]:
    """The protected paths at the workspace root, existing or not: what the sandbox keeps
    read-only or watches for creation."""
    paths = [root / name for name in PROTECTED_NAMES]
    paths += [root / d for d in hooks_dirs(root) if (root / d) not in paths]
    return paths


_PROTECTED = frozenset(PROTECTED_NAMES)

_GIT_CONFIG = ("git", "-c", "safe.directory=*", "-C")
# core.hooksPath as git reads it in a workspace, by the stat of every config file it comes from.
_hooks_cache: dict[str, tuple[tuple[object, ...], tuple[str, ...]]] = {}


def _config_files(root: Path) -> list[Path]:
    home = Path(os.path.expanduser("~"))
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    files = [root / ".git" / "config", home / ".gitconfig", Path(xdg) / "git" / "config"]
    files.append(Path(os.environ.get("GIT_CONFIG_GLOBAL") or "/nonexistent"))
    files.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    return files


def _stamp(path: Path) -> object:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def hooks_dirs(root: Path) -> tuple[str, ...]:
    """The folders inside the workspace (relative to it, lower-cased, '/'-separated) that git's
    core.hooksPath names, from the repository's, the user's and the system's config (as `git
    config` reads them, includes too). Read again whenever one of those files changes, so a
    hooksPath set during the session counts from the next call. Empty when git is missing, the
    workspace is not a repository, or the path lies outside the workspace (the rules refuse
    writes there anyway)."""
    key = str(root)
    stamp = tuple(_stamp(p) for p in _config_files(root))
    cached = _hooks_cache.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    found: tuple[str, ...] = ()
    try:
        proc = subprocess.run(
            # safe.directory: a repository another user owns is read too (git would refuse it,
            # and its hooks folder would go unprotected); reading config runs nothing.
            [*_GIT_CONFIG, str(root), "config", "--get-all", "core.hooksPath"],
            capture_output=True,
            text=True,
            timeout=5,
            env={k: v for k, v in os.environ.items() if not k.startswith("GIT_DIR")},
        )
    except (OSError, subprocess.SubprocessError):
        proc = None
    if proc is not None and proc.returncode == 0:
        real_root = os.path.realpath(root)
        dirs = []
        for line in proc.stdout.splitlines():
            value = os.path.expanduser(line.strip())
            if not value:
                continue
            target = os.path.realpath(os.path.join(real_root, value))
            if target == real_root:
                continue  # hooks in the workspace root itself: every file would ask
            if target.startswith(real_root.rstrip("/") + "/"):
                dirs.append(os.path.relpath(target, real_root).replace(os.sep, "/").lower())
        found = tuple(dict.fromkeys(dirs))
    _hooks_cache[key] = (stamp, found)
    return found
