"""The bash sandbox: bubblewrap (bwrap) around each command.

Inside it the whole filesystem is read-only except the workspace and a private /tmp. $HOME is an
empty, private folder: only the tool folders commands need (HOME_READABLE, the folders on PATH
under $HOME, the interpreter's, and the setting `sandboxHomeReadable`) are shown in it,
read-only, and in those the files the secret globs match read as empty (their list is cached:
see home_secrets). In the workspace the protected paths (.git, .agentls, .vscode, the hooks
folder, ...) are read-only, one a command creates is moved aside after it (SandboxPlan.
refuse_created), and the secret files read as empty. agentls's own data and config folders are
hidden (they hold every session's history, grants and tokens); the network is off unless
`sandboxNetwork` allows it; it has its own process tree (`--unshare-pid`: the server is not
visible, so neither is its memory) and no capabilities, and it dies with agentls.

Setting `sandbox`: "auto" (the default) uses it when bwrap works here (probed once per process
and bwrap binary by running `bwrap ... true`), "required" refuses to run bash without it, "off"
never uses it.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentls.config import Settings
from agentls.config_home import config_home
from agentls.language.errors import LanguageUnavailable
from agentls.permission.protected import protected_root_paths
from agentls.permission.rules import secret_globs
from agentls.tools.base import SandboxSettings, ToolError
from agentls.tools.support.ripgrep import RG_BASE_FLAGS, run_rg_lines

SandboxMode = Literal["auto", "off", "required"]

# Directories of $HOME that hold credentials: an empty tmpfs over each that exists.
HOME_SECRET_DIRS = (
    ".ssh",
    ".aws",
    ".azure",
    ".docker",
    ".kube",
    ".gnupg",
    ".password-store",
    ".config/gcloud",
    ".config/gh",
    ".local/share/keyrings",
    ".terraform.d",
)
# Files of $HOME that hold credentials: /dev/null over each that exists.
HOME_SECRET_FILES = (
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".envrc",
    ".env",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
)
# What the sandbox shows of $HOME (read-only; the rest of it is an empty private folder): git's
# config and the folders where language toolchains and user-installed programs usually live.
# Secret files in them still read as empty. More with the setting `sandboxHomeReadable`.
HOME_READABLE = (
    ".gitconfig",
    ".config/git",
    ".local/bin",
    ".local/lib",
    ".local/share/pipx",
    ".local/pipx",
    ".local/share/uv",
    ".local/share/mise",
    ".local/share/pnpm",
    ".local/share/fnm",
    ".pyenv",
    ".rye",
    ".cargo/bin",
    ".rustup",
    ".nvm",
    ".volta",
    ".bun/bin",
    ".deno/bin",
    "go/bin",
    "go/pkg/mod",
    ".sdkman/candidates",
    ".asdf",
    ".ghcup/bin",
    ".juliaup",
    ".elan",
    ".nix-profile",
    ".npm-global",
    # The user's skills (session/skills.py): their scripts run in the sandbox, read-only.
    ".claude/skills",
    ".agents/skills",
)
# The secret files found in those folders, by folder: (when, files, complete). Toolchain folders
# change rarely; a list younger than this is used again, so a command does not walk them.
HOME_SCAN_TTL_S = 300.0
_home_scans: dict[tuple[str, tuple[str, ...]], tuple[float, list[Path], bool]] = {}
# Root owns them, and a root command still does without capabilities.
SYSTEM_SECRET_GLOBS = ("/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_*_key", "/etc/sudoers")
# Secret files looked for in the workspace (beyond that, the plan is incomplete: see
# SandboxPlan.complete), and for how long.
MAX_WORKSPACE_SECRETS = 1000
SECRET_SCAN_TIMEOUT_S = 10.0
_BASE_FLAGS = (
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
)


@dataclass(frozen=True)
class SandboxPolicy:
    """What the settings ask for (Settings.sandbox, sandboxNetwork, secretPatterns)."""

    mode: SandboxMode = "auto"
    network: bool = False
    secret_globs: tuple[str, ...] = field(default_factory=secret_globs)
    home_readable: tuple[str, ...] = ()  # setting sandboxHomeReadable, beside HOME_READABLE

    @classmethod
    def from_settings(cls, settings: Settings, *, network: bool | None = None) -> SandboxPolicy:
        return cls(
            mode=settings.sandbox,
            network=settings.sandbox_network if network is None else network,
            secret_globs=secret_globs(settings.secret_patterns),
            home_readable=tuple(settings.sandbox_home_readable or ()),
        )


@dataclass
class SandboxPlan:
    """How one command will run in the sandbox."""

    prefix: list[str]  # bwrap and its options; the command follows
    network: bool
    # Every secret path found could be hidden (False: too many secret files in the workspace, or
    # the scan failed, or the workspace is itself inside a hidden path). An incomplete plan still
    # runs in the sandbox, but does not count as sandboxed for the "sandboxed" permission rule.
    complete: bool = True
    problems: list[str] = field(default_factory=list)
    root: Path | None = None
    # Protected paths at the workspace root that did not exist when the plan was made: one the
    # command creates is moved aside afterwards (refuse_created).
    absent: list[Path] = field(default_factory=list)
    moved_to: str | None = None  # where refuse_created put them

    def refuse_created(self) -> list[str]:
        """Move aside every protected path the command created (a bind cannot cover a path that
        does not exist yet, and a mount point would be left in the real workspace): into a folder
        of agentls's data directory, never deleted. Returns the workspace-relative names moved."""
        moved: list[str] = []
        created = [p for p in self.absent if os.path.lexists(p)]
        if not created:
            return moved
        stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns() % 10**6}"
        aside = _data_dir() / "refused" / stamp
        for path in created:
            try:
                aside.mkdir(parents=True, exist_ok=True)
                shutil.move(str(path), str(aside / path.name))
            except OSError:
                with contextlib.suppress(OSError):
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path)
                    else:
                        path.unlink()
            inside = self.root is not None and _is_within(path, self.root)
            name = os.path.relpath(path, self.root) if inside and self.root else str(path)
            moved.append(name)
        self.moved_to = str(aside)
        return moved

    def describe(self) -> str:
        network = "network on" if self.network else "network off"
        text = f"(ran in the sandbox: workspace writable, {network}"
        if self.problems:
            text += "; " + "; ".join(self.problems)
        return text + ")"


_probed: dict[str, str | None] = {}  # bwrap path -> why it does not work (None: it works)


async def probe(bwrap: str) -> str | None:
    """Why bwrap cannot sandbox a command here (None: it can); asked once per binary."""
    if bwrap in _probed:
        return _probed[bwrap]
    args = [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--unshare-net",
        *_BASE_FLAGS,
        "true",
    ]  # fmt: skip
    try:
        proc = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 20)
    except (OSError, TimeoutError) as exc:
        problem: str | None = f"{bwrap} could not be run ({exc})"
    else:
        detail = err.decode("utf-8", "replace").strip().splitlines()
        problem = (
            None
            if proc.returncode == 0
            else f"{bwrap} fails here: {detail[-1] if detail else f'exit {proc.returncode}'}"
        )
    _probed[bwrap] = problem
    return problem


def _data_dir() -> Path:
    from agentls.store.paths import default_data_dir

    return default_data_dir()


def _runtime_dirs(keep: Sequence[str], hidden: Sequence[Path]) -> list[Path]:
    """The folders under the `hidden` ones (the real /tmp, $HOME) that the interpreter (its
    executable, its standard library, the virtualenv) and the files in `keep` live in, outermost
    first, without repeats."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)}
    wanted.add(os.path.dirname(os.path.realpath(sys.executable)))
    wanted.update(os.path.dirname(os.path.realpath(k)) for k in keep)
    wanted.update(os.path.dirname(os.path.abspath(k)) for k in keep)  # a link's own folder
    shown = {Path(os.path.realpath(d)) for d in wanted if d}
    shown.add(Path(os.path.abspath(os.path.dirname(sys.executable))))  # through a linked venv
    dirs = sorted(shown, key=lambda p: len(p.parts))
    chosen: list[Path] = []
    for path in dirs:
        inside = any(path != h and _is_within(path, h) for h in hidden)
        if inside and path.is_dir() and not any(_is_within(path, c) for c in chosen):
            chosen.append(path)
    return chosen


def _is_within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


async def workspace_secrets(root: Path, globs: tuple[str, ...]) -> tuple[list[Path], bool]:
    """The files of the workspace that the secret globs match (case-insensitively, ignored and
    hidden files included, symlinks followed), and whether the list is complete."""
    args = [*RG_BASE_FLAGS, "--files", "--hidden", "--no-ignore", "--follow", "--glob", "!.git"]
    for pattern in globs:
        args += ["--iglob", pattern]
    found: list[Path] = []
    complete = True

    def on_lines(lines: list[bytes]) -> bool:
        nonlocal complete
        for line in lines:
            if not line:
                continue
            if len(found) >= MAX_WORKSPACE_SECRETS:
                complete = False
                return False
            found.append(root / os.fsdecode(line))
        return True

    try:
        result = await asyncio.wait_for(run_rg_lines(args, root, on_lines), SECRET_SCAN_TIMEOUT_S)
    except (TimeoutError, ToolError, OSError):
        return found, False
    # rg exits 1 when nothing matched, 2 on partial errors (an unreadable directory).
    return found, complete and result.returncode in (0, 1)


def protected_binds(root: Path) -> tuple[list[str], list[Path]]:
    """Read-only binds over the protected paths at the workspace root that exist (.git, .agentls,
    .vscode, the hooks folder, ...: permission/protected.py), after its writable bind: a command
    cannot change what runs or is allowed later outside the sandbox. One that does not exist is
    not mounted (its mount point would be created in the real workspace): it is returned as
    absent, and moved aside if the command creates it (SandboxPlan.refuse_created)."""
    args: list[str] = []
    absent: list[Path] = []
    for path in protected_root_paths(root):
        if not os.path.lexists(path):
            absent.append(path)
            continue
        real = Path(os.path.realpath(path))
        if _is_within(real, root) and real.exists():
            args += ["--ro-bind", str(real), str(real)]
        # Outside the workspace it is read-only already (or hidden under the private /tmp).
    return args, absent


def home_readable(extra: Sequence[str] = ()) -> list[Path]:
    """The folders and files of $HOME the sandbox shows (read-only): HOME_READABLE, the setting's
    `extra` ones (relative to $HOME, or absolute inside it), and every folder on PATH inside
    $HOME; those that exist, by their real paths, inside $HOME."""
    home = Path(os.path.realpath(Path.home()))
    names = [*HOME_READABLE, *extra]
    candidates = [home / os.path.expanduser(n) for n in names]
    candidates.append(config_home() / "skills")  # the rest of agentls's config stays hidden
    candidates += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    shown: list[Path] = []
    for path in candidates:
        real = Path(os.path.realpath(path))
        if real == home or not _is_within(real, home) or not real.exists():
            continue
        if real not in shown:
            shown.append(real)
    return shown


async def home_secrets(folders: Sequence[Path], globs: tuple[str, ...]) -> tuple[list[Path], bool]:
    """The secret files (the secret globs) in the shown folders of $HOME, and whether the list is
    complete. Each folder's list is kept for HOME_SCAN_TTL_S, so a command walks none of them
    while it is fresh (docs/benchmarks.md has the cost)."""
    found: list[Path] = []
    complete = True
    now = time.monotonic()
    for folder in folders:
        if folder.is_file():
            if _matches_secret(folder, globs):
                found.append(folder)
            continue
        key = (str(folder), globs)
        cached = _home_scans.get(key)
        if cached is None or now - cached[0] > HOME_SCAN_TTL_S:
            files, ok = await workspace_secrets(folder, globs)
            cached = (now, files, ok)
            _home_scans[key] = cached
        found += cached[1]
        complete = complete and cached[2]
    return found, complete


# A folder of $HOME's shown ones holding this many secret files is hidden whole (an empty folder
# in its place, one mount) rather than file by file: Python's test certificates (~/.pyenv's
# lib/python3.X/test/certdata, 20 to 30 each) would otherwise cost hundreds of mounts a command.
CROWDED_FOLDER = 8


def _crowded_folders(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """(the folders holding CROWDED_FOLDER secret files or more, the other files)."""
    by_folder: dict[Path, list[Path]] = {}
    for path in files:
        by_folder.setdefault(path.parent, []).append(path)
    crowded = [folder for folder, inside in by_folder.items() if len(inside) >= CROWDED_FOLDER]
    rest = [p for folder, inside in by_folder.items() if folder not in crowded for p in inside]
    return crowded, rest


def _matches_secret(path: Path, globs: tuple[str, ...]) -> bool:
    from agentls.permission.globs import glob_regex, rule_pattern

    name = path.as_posix().lstrip("/")
    return any(glob_regex(rule_pattern(g), True).match(name) for g in globs)


def _hide_home(home: Path, root: Path) -> list[str] | None:
    """The binds that make $HOME an empty private folder (the shown folders are bound back by
    the caller); None when it cannot be hidden (it is /, or it holds the workspace's root)."""
    if home == Path("/") or not home.is_dir() or _is_within(home, root):
        return None
    return ["--tmpfs", str(home)]


async def prepare(
    policy: SandboxSettings,
    root: Path,
    keep: Sequence[str] = (),
    *,
    writable: bool = True,
    also: Sequence[Path] = (),
) -> SandboxPlan | None:
    """The plan for a command in root, or None when it runs without the sandbox ("off", or "auto"
    without a working bwrap). Raises ToolError when "required" cannot be met. `keep`: files the
    command line needs (bash's supervisor): they stay visible, read-only, even under /tmp or
    $HOME. `writable`: False mounts the workspace read-only too (headless language servers).
    `also`: the other workspace folders, mounted as the root is, their protected paths and
    secrets kept as its are."""
    if policy.mode == "off":
        return None
    bwrap = shutil.which("bwrap")
    problem = "bubblewrap (bwrap) is not installed" if bwrap is None else await probe(bwrap)
    if problem is not None or bwrap is None:
        if policy.mode == "required":
            raise ToolError(
                f'The bash sandbox is required (setting "sandbox": "required") but {problem}, so '
                "the command was not run. Install bubblewrap (Debian/Ubuntu: apt-get install "
                'bubblewrap), or set "sandbox" to "auto" or "off".'
            )
        return None
    root = Path(os.path.realpath(root))
    plan = SandboxPlan(prefix=[bwrap], network=policy.network, root=root)
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    home = Path(os.path.realpath(Path.home()))
    hide_home = _hide_home(home, root)
    shown = home_readable(policy.home_readable) if hide_home else []
    if hide_home is None:
        plan.complete = False
        plan.problems.append(f"$HOME ({home}) holds the workspace, so it stays visible")
    else:
        args += hide_home
    # The private /tmp and $HOME hide what lives under them, the Python that runs the supervisor
    # too when it is there (a virtualenv): that stays visible, read-only, as do the shown folders
    # of $HOME. Before the workspace's bind, so that one stays writable inside such a folder.
    hidden = [Path(os.path.realpath("/tmp"))] + ([home] if hide_home else [])
    for path in [*_runtime_dirs(keep, hidden), *shown]:
        args += ["--ro-bind", str(path), str(path)]
    folders = [root, *(Path(os.path.realpath(p)) for p in also if os.path.isdir(p))]
    for folder in folders:
        args += ["--bind" if writable else "--ro-bind", str(folder), str(folder)]
    args += ["--chdir", str(root), "--setenv", "TMPDIR", "/tmp"]
    for folder in folders:
        binds, absent = protected_binds(folder)
        args += binds
        plan.absent += absent
    args += list(_BASE_FLAGS)
    args.append("--share-net" if policy.network else "--unshare-net")
    args += await _hidden_secrets(plan, folders, policy, shown, home if hide_home else None)
    plan.prefix += args
    return plan


def main_worktree(folder: Path) -> Path | None:
    """The main working tree of the repository folder is a linked worktree of (a background
    session's: the secret files there, `.env` not committed, are not in the worktree, and are
    hidden as the workspace's are); None for any other folder. Read from the files git keeps."""
    try:
        pointer = (folder / ".git").read_text(encoding="utf-8")
        if not pointer.startswith("gitdir:"):
            return None
        gitdir = (folder / pointer.removeprefix("gitdir:").strip()).resolve()
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, UnicodeDecodeError):
        return None  # .git a folder (a main tree), none, or a submodule's
    return common.parent if common.name == ".git" and common.parent.is_dir() else None


async def _hidden_secrets(
    plan: SandboxPlan,
    folders: list[Path],
    policy: SandboxSettings,
    shown: list[Path],
    hidden_home: Path | None,
) -> list[str]:
    """The binds that hide the secrets: the secret folders and files of $HOME, the system's, the
    secret files of the workspace and of the shown folders of $HOME, and agentls's own data and
    config folders. Under a `hidden_home` only those in a shown folder or the workspace need it
    (a mount point elsewhere there would tell which secrets exist)."""

    def needed(real: Path) -> bool:
        if hidden_home is None or not _is_within(real, hidden_home):
            return True
        return any(_is_within(real, p) for p in [*shown, *folders])

    home = Path.home()
    hidden_dirs = [home / name for name in HOME_SECRET_DIRS]
    hidden_files = [home / name for name in HOME_SECRET_FILES]
    for pattern in SYSTEM_SECRET_GLOBS:
        hidden_files += [Path(p) for p in glob.glob(pattern)]
    hidden_dirs += [_data_dir(), config_home()]
    found: list[Path] = []
    complete = True
    mains = {m for f in folders if (m := main_worktree(f)) is not None and m not in folders}
    for folder in [*folders, *sorted(mains)]:  # each workspace folder's secret files
        in_folder, folder_complete = await workspace_secrets(folder, policy.secret_globs)
        found += in_folder
        complete = complete and folder_complete
    in_home, home_complete = await home_secrets(shown, policy.secret_globs)
    crowded, in_home = _crowded_folders(in_home)
    hidden_dirs += crowded
    hidden_files += found + in_home
    if not (complete and home_complete):
        plan.complete = False
        plan.problems.append("not every secret file could be listed and hidden")
    args: list[str] = []
    inside: list[str] = []
    done: list[Path] = []
    reals = sorted({Path(os.path.realpath(p)) for p in hidden_dirs}, key=lambda p: len(p.parts))
    for real in reals:
        if not real.is_dir() or not needed(real) or any(_is_within(real, d) for d in done):
            continue  # (one inside a folder hidden already is hidden with it)
        if any(_is_within(f, real) for f in folders):  # hiding it would hide the workspace
            plan.complete = False
            inside.append(str(real))
            continue
        args += ["--tmpfs", str(real), "--remount-ro", str(real)]
        done.append(real)
    for path in hidden_files:
        real = Path(os.path.realpath(path))
        if real.is_file() and needed(real) and not any(_is_within(real, d) for d in done):
            args += ["--ro-bind", "/dev/null", str(real)]
    if inside:
        plan.problems.append(f"the workspace is inside {', '.join(inside)}, which stays visible")
    return args


async def language_server_prefix(
    settings: Settings, root: Path, command: Sequence[str] = ()
) -> list[str]:
    """What a headless language server runs inside (language.headless.Launcher): the bash
    sandbox with the workspace read-only and no network (a server only reads the workspace); no
    prefix where the sandbox is off or not available under "auto". The command's program and the
    files it names stay visible, read-only, where the sandbox would hide them (under /tmp or
    $HOME: a server installed in a project's node_modules there)."""
    keep = [a for a in command[1:] if os.path.isfile(a)]
    if command:
        program = shutil.which(command[0]) or command[0]
        if os.path.exists(program):
            keep.insert(0, program)
    try:
        plan = await prepare(
            SandboxPolicy.from_settings(settings, network=False), root, keep, writable=False
        )
    except ToolError as exc:
        raise LanguageUnavailable(f"the language server was not started: {exc}") from None
    return plan.prefix if plan is not None else []
