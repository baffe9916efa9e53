"""The paths of a workspace whose change can run programs or widen permissions later, and the git
commands that only read a repository: what the rules make ask for and the sandbox keeps read-only."""

from __future__ import annotations

# Files and directories of the workspace (at any depth) whose change can run programs or widen
# permissions later, outside the sandbox and without a question: git's config and hooks (the
# editor runs `git status` constantly), agentls's and the editors' settings, direnv, MCP servers,
# git attributes (filters run programs) and pre-commit hooks. Writing them (write, edit, a bash
# redirection, sandboxed or not) asks even under {"*": "allow"}; the sandbox mounts the ones at the
# workspace root read-only (tools/sandbox.py).
PROTECTED_NAMES: tuple[str, ...] = (
    ".git",
    ".agentls",
    ".vscode",
    ".idea",
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


def is_protected_path(subject: str) -> bool:
    """Whether a workspace-relative path is, or lies inside, a protected path (a component named
    as one of PROTECTED_NAMES, at any depth, without regard to case)."""
    return any(part.lower() in _PROTECTED for part in subject.split("/"))


_PROTECTED = frozenset(PROTECTED_NAMES)
