"""Git worktrees for background sessions: each session works in its own checkout of the
repository on its own branch `agentls/<slug>`, made from the current HEAD, so its edits never touch
the user's working tree until the user merges the branch.

Everything here runs the `git` program (the user's own, with their configuration): a worktree is
git's feature and its bookkeeping (`git worktree list`, `prune`) must keep working for the user.
But it runs no program a repository's config or files could name (`hardened_env`): no hooks, no
fsmonitor, no transport, no git run inside a nested repository (a session can make one in its
worktree: its config would run outside the sandbox), and none of the filters, diff and textconv
programs the repository's own config (`.git/config` and what it includes) names; the user's
global ones (git-lfs) stay. A merge or a hunk applied through a merge driver the repository's
config names is refused (git would run it).
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


_COMMIT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SESSION_BRANCH = re.compile(re.escape(BRANCH_PREFIX) + r"[a-z0-9]+(?:-[a-z0-9]+)*")


def commit_id(base: str) -> str:
    """base, a full commit id; WorktreeError otherwise (a record's base reaches git's command
    line: `--output=FILE` there would be an option)."""
    if not _COMMIT_ID.fullmatch(base):
        raise WorktreeError(f"base {base[:60]!r} is not a commit id")
    return base


def session_branch(branch: str) -> str:
    """branch, a name `create` makes (agentls/<slug>); WorktreeError otherwise."""
    if not _SESSION_BRANCH.fullmatch(branch):
        raise WorktreeError(f"{branch[:60]!r} is not a background session's branch")
    return branch


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


# Set for every git run here: no hook runs (core.hooksPath naming no folder), no fsmonitor, no
# transport (a partial clone would fetch through ssh or ext::), no git run inside a submodule or
# nested repository (status runs one there, with that repository's config: it is given
# --ignore-submodules=all too).
ALWAYS_OFF = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("maintenance.auto", "false"),
    ("gc.auto", "0"),
)
# Keys of the repository's own config that name a program git would run for these commands.
_PROGRAM_KEY = re.compile(
    r"(?is)(filter\..+\.(clean|smudge|process)|diff\..+\.(command|textconv)"
    r"|diff\.external)"
)
_FILTER_KEY = re.compile(r"(?is)filter\.(.+)\.[^.]+")
_MERGE_DRIVER = re.compile(r"(?is)merge\..+\.driver")
_MERGE_OR_SIGN = re.compile(r"(?is)merge\..+\.driver|gpg\.(.+\.)?program")
NO_PROGRAMS = ("--no-ext-diff", "--no-textconv", "--no-renames")


def _local_config(cwd: Path) -> list[str]:
    """The names set in the repository's own config (its `.git/config`, a worktree's config and
    the files they include), as `git config --show-scope` reads them."""
    done = subprocess.run(
        ["git", "config", "-z", "--show-scope", "--name-only", "--includes", "--list"],
        cwd=cwd,
        env=_with_config(dict(os.environ), ALWAYS_OFF),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    items = done.stdout.decode(errors="surrogateescape").split("\0")
    return [
        name
        for scope, name in zip(items[::2], items[1::2], strict=False)
        if scope in ("local", "worktree")
    ]


def _with_config(env: dict[str, str], pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """env with pairs added as git's GIT_CONFIG_KEY_n/VALUE_n (after any the caller had): like
    `git -c`, above every config file, passed on to the gits git runs, and a name may hold "="."""
    start = int(env.get("GIT_CONFIG_COUNT") or 0)
    for n, (key, value) in enumerate(pairs, start):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    env["GIT_CONFIG_COUNT"] = str(start + len(pairs))
    return env


def hardened_env(cwd: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a git run in cwd: ALWAYS_OFF, and every filter, diff and textconv
    program the repository's own config names turned off (a filter no longer required)."""
    off = list(ALWAYS_OFF)
    for name in _local_config(cwd):
        if _PROGRAM_KEY.fullmatch(name):
            off.append((name, ""))
        match = _FILTER_KEY.fullmatch(name)
        if match:  # an empty filter that is required fails every file it covers
            off.append((f"filter.{match.group(1)}.required", "false"))
    return _with_config(dict(env if env is not None else os.environ), tuple(off))


def refuse_merge_drivers(root: Path, signing: bool = False) -> None:
    """WorktreeError when the repository's own config names a merge driver (a merge or a
    three-way apply would run it, through the files' attributes) or, with signing, the program
    that signs a commit: agentls runs neither."""
    pattern = _MERGE_OR_SIGN if signing else _MERGE_DRIVER
    named = [n for n in _local_config(root) if pattern.fullmatch(n)]
    if named:
        raise WorktreeError(
            f"your repository's config names a program git would run ({named[0]}), which "
            "agentls does not run: do it yourself with git; nothing was changed"
        )


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    """git's stdout (run with hardened_env); WorktreeError with its stderr when it fails and
    check is set."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=hardened_env(cwd, env),
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
    return [
        line
        for line in git(root, "status", "--porcelain", "--ignore-submodules=all").splitlines()
        if line.strip()
    ]


def _branch_exists(root: Path, branch: str) -> bool:
    done = subprocess.run(
        ["git", "show-ref", "--verify", "--quiet", f"refs/heads/{branch}"],
        cwd=root,
        env=hardened_env(root),
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
    files are left as they are. WorktreeError for a folder that is not a background session's
    worktree (require_own_branch)."""
    require_own_branch(worktree)
    with tempfile.TemporaryDirectory(prefix="agentls-index-") as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        git(worktree, "read-tree", "HEAD", env=env)
        add_all(worktree, env)
        return git(worktree, "write-tree", env=env).strip()


def nested_repositories(worktree: Path, env: dict[str, str] | None = None) -> list[str]:
    """The nested repositories in the worktree (a folder with its own .git the session made,
    and the submodules its index has), relative to it."""
    found = []
    status = git(worktree, "status", "--porcelain", "-z", "-uall", "--ignore-submodules=all")
    for entry in status.split("\0"):
        if entry.startswith("?? ") and entry.endswith("/"):  # -uall: only a repository's
            found.append(entry[3:].rstrip("/"))
    for entry in git(worktree, "ls-files", "-s", "-z", env=env).split("\0"):
        if entry.startswith("160000 "):
            found.append(entry.split("\t", 1)[1])
    return found


def add_all(worktree: Path, env: dict[str, str] | None = None) -> None:
    """`git add --all` of the worktree, its nested repositories left out: git would run `git
    status` in each (with that repository's config, which names programs: the session made it,
    outside agentls's reach), and they are not the session's change to bring in."""
    leave = [f":(exclude,literal){path}" for path in nested_repositories(worktree, env)]
    git(worktree, "add", "--all", "--", ".", *leave, env=env)


def changed_files(worktree: Path, base: str) -> list[ChangedFile]:
    """What differs between base and the worktree's files now (`git diff --numstat`). A symbolic
    link or a nested repository on either side counts as binary (no text, no hunks): its
    "text" is where it points, and reading it as a file would read what it points at."""
    tree = snapshot(worktree)
    out = git(worktree, "diff", *NO_PROGRAMS, "-z", "--raw", "--numstat", commit_id(base), tree)
    items = out.split("\0")
    special: set[str] = set()
    files = []
    n = 0
    while n < len(items):
        item = items[n]
        if item.startswith(":"):  # raw: ":old new oldsha newsha status", then the path
            modes = item[1:].split(" ")[:2]
            if any(m in ("120000", "160000") for m in modes) and n + 1 < len(items):
                special.add(items[n + 1])
            n += 2
            continue
        n += 1
        if not item:
            continue
        added, removed, path = item.split("\t", 2)
        binary = added == "-" or path in special or _under_link(worktree, path)
        files.append(
            ChangedFile(
                path,
                None if binary else int(added),
                None if binary else int(removed),
            )
        )
    return files


def _under_link(worktree: Path, path: str) -> bool:
    """Whether a folder on the path inside the worktree is a symbolic link (the file there is
    then a file elsewhere)."""
    parts = path.split("/")[:-1]
    return any((worktree.joinpath(*parts[: n + 1])).is_symlink() for n in range(len(parts)))


def diff(worktree: Path, base: str) -> str:
    """The unified diff from base to the worktree's files now."""
    return git(worktree, "diff", *NO_PROGRAMS, commit_id(base), snapshot(worktree))


def _identity(root: Path) -> tuple[str, ...]:
    has = git(root, "config", "user.email", check=False).strip()
    return () if has else FALLBACK_IDENTITY


def commit_all(worktree: Path, message: str) -> bool:
    """Commit everything the session left uncommitted in its worktree on its branch; False:
    there was nothing."""
    require_own_branch(worktree)
    if not uncommitted(worktree):
        return False
    add_all(worktree)
    if not git(worktree, "diff", "--cached", "--name-only").strip():
        return False  # only nested repositories, left out
    # Unsigned: a signing program the repository's config names would run outside the sandbox.
    unsigned = ("-c", "commit.gpgSign=false")
    git(
        worktree, *_identity(worktree), *unsigned, "commit", "--quiet", "--no-verify", "-m", message
    )
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
    session_branch(branch)
    require_clean(root)
    refuse_merge_drivers(root, signing=True)
    args = ("merge", "--no-ff", "--no-edit", "-m", f"Merge {branch} (agentls background session)")
    done = subprocess.run(
        ["git", *_identity(root), *args, "--", branch],
        cwd=root,
        env=hardened_env(root),
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
    require_worktree(root, worktree)
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
    tree = snapshot(worktree)
    patch = git(worktree, "diff", *NO_PROGRAMS, "--binary", base, tree, "--", *paths)
    if hunks is not None:
        if len(paths) != 1:
            raise WorktreeError("hunks are chosen in one file at a time")
        try:
            patch = only_hunks(patch, hunks)
        except IndexError as exc:
            raise WorktreeError(f"{paths[0]}: {exc}") from None
    refuse_merge_drivers(root)
    done = subprocess.run(
        ["git", "apply", "--3way", "--whitespace=nowarn"],
        cwd=root,
        env=hardened_env(root),
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
    return int(git(root, "rev-list", "--count", f"HEAD..{session_branch(branch)}").strip() or 0)


def require_worktree(root: Path, path: Path, branch: str | None = None) -> None:
    """WorktreeError unless path is a linked worktree of root's repository (not its main one)
    on a background session's branch (this one, given): what a record names is checked before
    anything is written or deleted there."""
    real = os.path.realpath(path)
    entries = git(root, "worktree", "list", "--porcelain", "-z").split("\0\0")
    for entry in entries[1:]:  # the first is the main worktree
        fields = {f.partition(" ")[0]: f.partition(" ")[2] for f in entry.split("\0") if f}
        if os.path.realpath(fields.get("worktree", "")) != real:
            continue
        on = fields.get("branch", "").removeprefix("refs/heads/")
        if _SESSION_BRANCH.fullmatch(on) and (branch is None or on == branch):
            return
    raise WorktreeError(
        f"{path} is not a worktree of {root} on {branch or 'a background session branch'}: "
        "nothing was changed there"
    )


def require_own_branch(worktree: Path) -> None:
    """WorktreeError unless worktree is a linked worktree on a background session's branch,
    whose git directory and shared one are outside it and whose files are its own: a `.git` file
    rewritten to name a git directory inside the worktree (its config and `core.worktree` the
    session's) would have agentls's git, outside the sandbox, run by the session's rules."""
    asked = ("rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir")
    found = git(worktree, *asked).splitlines()
    on = git(worktree, "symbolic-ref", "--quiet", "HEAD", check=False).strip()
    real = Path(os.path.realpath(worktree))

    def inside(path: str) -> bool:
        there = Path(os.path.realpath(worktree / path))
        return there == real or real in there.parents

    own = (
        len(found) == 3
        and Path(os.path.realpath(found[0])) == real
        and not inside(found[1])
        and not inside(found[2])
        and Path(os.path.realpath(found[1])) != Path(os.path.realpath(worktree / found[2]))
    )
    if not own or not _SESSION_BRANCH.fullmatch(on.removeprefix("refs/heads/")):
        raise WorktreeError(f"{worktree} is not a background session's worktree: nothing done")


def remove(root: Path, path: Path, branch: str) -> None:
    """Delete the worktree (its files, changes not committed included) and its branch; refused
    (WorktreeError) for a path or branch that is not a background session's (require_worktree)."""
    session_branch(branch)
    if path.exists():
        require_worktree(root, path, branch)
        git(root, "worktree", "remove", "--force", str(path))
    else:
        git(root, "worktree", "prune")
    if _branch_exists(root, branch):
        git(root, "branch", "--quiet", "-D", "--", branch)
