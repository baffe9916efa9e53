"""Git worktrees for background sessions: each session works in its own checkout of the
repository on its own branch `agentls/<slug>`, made from the current HEAD, so its edits never touch
the user's working tree until the user merges the branch.

Everything here runs the `git` program (the user's own, with their configuration): a worktree is
git's feature and its bookkeeping (`git worktree list`, `prune`) must keep working for the user.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

BRANCH_PREFIX = "agentls/"
WORKTREES_DIR = "agentls-worktrees"
SLUG_WORDS = 6
SLUG_CHARS = 40
# Enough for any real clash; past it something else is wrong (a script starting sessions).
MAX_CLASHES = 100
# Used only when the user has no git identity configured: the merge and the commit of the
# session's changes need one.
FALLBACK_IDENTITY = ("-c", "user.name=agentls", "-c", "user.email=agentls@localhost")


class WorktreeError(Exception):
    """A git operation failed or was refused; the message says why and what to do."""


@dataclass(frozen=True)
class Worktree:
    path: Path
    branch: str
    base: str  # the commit it was made from
    slug: str
    requested_slug: str  # the prompt's slug; differs from slug after a clash


@dataclass(frozen=True)
class ChangedFile:
    path: str
    added: int | None  # None: a binary file
    removed: int | None


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    """git's stdout; WorktreeError with its stderr when it fails and check is set."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise WorktreeError("git is not installed (background sessions need it)") from None
    if check and done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        raise WorktreeError(f"git {' '.join(args[:2])} failed: {said}")
    return done.stdout


def repository_root(path: Path) -> Path:
    """The top of the working tree holding path; WorktreeError if it is in none."""
    try:
        return Path(git(path, "rev-parse", "--show-toplevel").strip()).resolve()
    except WorktreeError:
        raise WorktreeError(
            f"{path} is not in a git repository: background sessions run in a git worktree"
        ) from None


def common_dir(root: Path) -> Path:
    """The repository's git directory shared by all its worktrees (.git of the main one)."""
    found = Path(git(root, "rev-parse", "--git-common-dir").strip())
    return (root / found).resolve() if not found.is_absolute() else found


def slug_of(prompt: str) -> str:
    """A branch-safe name from the prompt's first words: `fix-the-login-bug`; `task` if none."""
    words = re.findall(r"[a-z0-9]+", prompt.lower())[:SLUG_WORDS]
    slug = "-".join(words)[:SLUG_CHARS].strip("-")
    return slug or "task"


def uncommitted(root: Path) -> list[str]:
    """`git status --porcelain` lines of the working tree (untracked files included)."""
    return [line for line in git(root, "status", "--porcelain").splitlines() if line.strip()]


def _branch_exists(root: Path, branch: str) -> bool:
    done = subprocess.run(
        ["git", "show-ref", "--verify", "--quiet", f"refs/heads/{branch}"],
        cwd=root,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode == 0


def create(root: Path, prompt: str, folder: Path | None = None) -> Worktree:
    """A new worktree of root's repository at its HEAD, on a new branch agentls/<slug>, under
    folder (default: <git common dir>/agentls-worktrees). A slug whose branch or folder exists
    already gets -2, -3, ... (Worktree.requested_slug keeps the one asked for)."""
    base = git(root, "rev-parse", "--verify", "HEAD").strip()
    if not base:
        raise WorktreeError(f"{root} has no commit yet: a worktree starts from HEAD")
    parent = folder if folder is not None else common_dir(root) / WORKTREES_DIR
    parent.mkdir(parents=True, exist_ok=True)
    wanted = slug_of(prompt)
    for n in range(1, MAX_CLASHES + 1):
        slug = wanted if n == 1 else f"{wanted}-{n}"
        branch = BRANCH_PREFIX + slug
        path = parent / slug
        if path.exists() or _branch_exists(root, branch):
            continue
        git(root, "worktree", "add", "--quiet", "-b", branch, str(path), base)
        return Worktree(path.resolve(), branch, base, slug, wanted)
    raise WorktreeError(f"{MAX_CLASHES} branches {BRANCH_PREFIX}{wanted}-N exist already")


def snapshot(worktree: Path) -> str:
    """The tree of the worktree's files as they are now (changes not committed and new files
    included, ignored files not), written with a private index: the worktree's own index and
    files are left as they are."""
    with tempfile.TemporaryDirectory(prefix="agentls-index-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        git(worktree, "read-tree", "HEAD", env=env)
        git(worktree, "add", "--all", ".", env=env)
        return git(worktree, "write-tree", env=env).strip()


def changed_files(worktree: Path, base: str) -> list[ChangedFile]:
    """What differs between base and the worktree's files now (`git diff --numstat`)."""
    out = git(worktree, "diff", "--numstat", "--no-renames", base, snapshot(worktree))
    files = []
    for line in out.splitlines():
        added, removed, path = line.split("\t", 2)
        files.append(
            ChangedFile(
                path,
                None if added == "-" else int(added),
                None if removed == "-" else int(removed),
            )
        )
    return files


def diff(worktree: Path, base: str) -> str:
    """The unified diff from base to the worktree's files now."""
    return git(worktree, "diff", "--no-renames", base, snapshot(worktree))


def _identity(root: Path) -> tuple[str, ...]:
    has = git(root, "config", "user.email", check=False).strip()
    return () if has else FALLBACK_IDENTITY


def commit_all(worktree: Path, message: str) -> bool:
    """Commit everything the session left uncommitted in its worktree on its branch; False:
    there was nothing."""
    if not uncommitted(worktree):
        return False
    git(worktree, "add", "--all", ".")
    git(worktree, *_identity(worktree), "commit", "--quiet", "--no-verify", "-m", message)
    return True


def current_branch(root: Path) -> str:
    name = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    return name


def require_clean(root: Path) -> None:
    """WorktreeError when root's working tree has uncommitted changes (a merge is refused)."""
    dirty = uncommitted(root)
    if dirty:
        raise WorktreeError(
            f"{root} has uncommitted changes ({len(dirty)} files): commit or stash them first; "
            "nothing was merged"
        )


def merge(root: Path, branch: str) -> str:
    """`git merge --no-ff branch` into root's current branch; refused (WorktreeError) when root's
    working tree has uncommitted changes. A conflict leaves the merge in progress for the user to
    resolve (or `git merge --abort`), as git does; the message lists the files."""
    require_clean(root)
    args = ("merge", "--no-ff", "--no-edit", "-m", f"Merge {branch} (agentls background session)")
    done = subprocess.run(
        ["git", *_identity(root), *args, branch],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        conflicted = git(root, "diff", "--name-only", "--diff-filter=U", check=False).split()
        if conflicted:
            raise WorktreeError(
                f"merging {branch} conflicts in {', '.join(conflicted)}: resolve them and "
                "`git commit`, or `git merge --abort` to leave your tree as it was"
            )
        raise WorktreeError(f"git merge {branch} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout.strip()


def only_hunks(patch: str, keep: set[int]) -> str:
    """The patch (one file's) with only its hunks numbered in keep (from 0, in order);
    IndexError naming the count when one is not there."""
    lines = patch.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("@@")]
    missing = sorted(n for n in keep if not 0 <= n < len(starts))
    if missing:
        raise IndexError(f"no hunk {missing[0]}: its diff has {len(starts)}, numbered from 0")
    out = lines[: starts[0]] if starts else lines
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        if n in keep:
            out += lines[start:end]
    return "".join(out)


def apply_files(
    worktree: Path, base: str, root: Path, paths: list[str], hunks: set[int] | None = None
) -> list[str]:
    """Bring the worktree's changes to these files (relative to the repository) into root's
    working tree as staged, uncommitted changes (`git apply --3way`), for the user to review and
    commit.
    Refused (WorktreeError) for a file the worktree did not change, or one with uncommitted
    changes in root (they would be mixed). A conflict leaves git's markers in the file (its
    committed text is in HEAD) and is named. The files applied."""
    changed = {c.path for c in changed_files(worktree, base)}
    unknown = [p for p in paths if p not in changed]
    if unknown:
        raise WorktreeError(f"not changed by the session: {', '.join(unknown)}")
    dirty = {line[3:] for line in uncommitted(root)}
    mixed = [p for p in paths if p in dirty]
    if mixed:
        raise WorktreeError(
            f"you have uncommitted changes in {', '.join(mixed)}: commit or stash them first; "
            "nothing was applied"
        )
    patch = git(
        worktree, "diff", "--binary", "--no-renames", base, snapshot(worktree), "--", *paths
    )
    if hunks is not None:
        if len(paths) != 1:
            raise WorktreeError("hunks are chosen in one file at a time")
        try:
            patch = only_hunks(patch, hunks)
        except IndexError as exc:
            raise WorktreeError(f"{paths[0]}: {exc}") from None
    done = subprocess.run(
        ["git", "apply", "--3way", "--whitespace=nowarn"],
        cwd=root,
        input=patch.encode(),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        conflicted = git(root, "diff", "--name-only", "--diff-filter=U", check=False).split()
        said = (done.stderr or done.stdout).decode(errors="replace").strip()
        if conflicted:
            raise WorktreeError(
                f"conflicts in {', '.join(conflicted)}: resolve git's markers there (your "
                f"committed text is in HEAD); the other files were applied. {said}"
            )
        raise WorktreeError(f"git apply failed: {said}")
    return paths


def unmerged(root: Path, branch: str) -> int:
    """How many commits of branch its repository's current HEAD does not have."""
    return int(git(root, "rev-list", "--count", f"HEAD..{branch}").strip() or 0)


def remove(root: Path, path: Path, branch: str) -> None:
    """Delete the worktree (its files, changes not committed included) and its branch."""
    if path.exists():
        git(root, "worktree", "remove", "--force", str(path))
    else:
        git(root, "worktree", "prune")
    if _branch_exists(root, branch):
        git(root, "branch", "--quiet", "-D", branch)
