"""The bash sandbox: bubblewrap (bwrap) around each command.

Inside it the whole filesystem is read-only except the workspace and a private /tmp (and in the
workspace its protected paths, .git, .agentls, .vscode, ..., are read-only too); the guarded
secret paths are hidden (secret directories of $HOME such as ~/.ssh and ~/.aws become empty,
secret files, in $HOME, /etc and the workspace (the permission secret globs), read as empty);
agentls's own data directory (sessions, grants) is hidden and its config directory read-only, so
a command cannot write its own permissions; the network is off unless `sandboxNetwork` allows
it; it has its own process tree (`--unshare-pid`: the server is not visible, so neither is its
memory) and no capabilities, and it dies with agentls.

Setting `sandbox`: "auto" (the default) uses it when bwrap works here (probed once per process
and bwrap binary by running `bwrap ... true`), "required" refuses to run bash without it, "off"
never uses it.
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentls.config_home import config_home
from agentls.permission.protected import PROTECTED_NAMES
from agentls.permission.rules import secret_globs
from agentls.tools.base import SandboxSettings, ToolError
from agentls.tools.ripgrep import RG_BASE_FLAGS, run_rg_lines

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


def _runtime_dirs(keep: Sequence[str]) -> list[Path]:
    """The folders under /tmp that the interpreter (its executable, its standard library, the
    virtualenv) and the files in `keep` live in, outermost first, without repeats."""
    tmp = Path(os.path.realpath("/tmp"))
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)}
    wanted.add(os.path.dirname(os.path.realpath(sys.executable)))
    wanted.update(os.path.dirname(os.path.realpath(k)) for k in keep)
    dirs = sorted({Path(os.path.realpath(d)) for d in wanted if d}, key=lambda p: len(p.parts))
    chosen: list[Path] = []
    for path in dirs:
        if path != tmp and _is_within(path, tmp) and path.is_dir():
            if not any(_is_within(path, c) for c in chosen):
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


def protected_binds(root: Path) -> list[str]:
    """Read-only binds over the protected paths (PROTECTED_NAMES: .git, .agentls, .vscode, ...) that
    exist at the workspace root, after its writable bind: a command cannot change what runs or is
    allowed later outside the sandbox (git hooks and config, the agent's and the editor's settings).
    One that does not exist is not mounted (its mount point would be created in the real
    workspace); the permission rules ask before a command line writes it."""
    args: list[str] = []
    for name in PROTECTED_NAMES:
        path = root / name
        if not os.path.lexists(path):
            continue
        real = Path(os.path.realpath(path))
        if _is_within(real, root) and real.exists():
            args += ["--ro-bind", str(real), str(real)]
        # Outside the workspace it is read-only already (or hidden under the private /tmp).
    return args


async def prepare(
    policy: SandboxSettings, root: Path, keep: Sequence[str] = ()
) -> SandboxPlan | None:
    """The plan for a command in root, or None when it runs without the sandbox ("off", or "auto"
    without a working bwrap). Raises ToolError when "required" cannot be met. `keep`: files the
    command line needs (bash's supervisor): they stay visible, read-only, even under /tmp."""
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
    plan = SandboxPlan(prefix=[bwrap], network=policy.network)
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # The private /tmp hides what lives under the real one, the Python that runs the supervisor
    # too when it is there (a virtualenv in /tmp): that stays visible, read-only. Before the
    # workspace's bind, so that one stays writable when it lies inside such a folder.
    for path in _runtime_dirs(keep):
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(root), str(root), "--chdir", str(root), "--setenv", "TMPDIR", "/tmp"]
    args += protected_binds(root)
    args += list(_BASE_FLAGS)
    args.append("--share-net" if policy.network else "--unshare-net")

    hidden_dirs: list[Path] = []
    hidden_files: list[Path] = []
    home = Path.home()
    hidden_dirs += [home / name for name in HOME_SECRET_DIRS]
    hidden_files += [home / name for name in HOME_SECRET_FILES]
    for pattern in SYSTEM_SECRET_GLOBS:
        hidden_files += [Path(p) for p in glob.glob(pattern)]
    hidden_dirs.append(_data_dir())
    found, complete = await workspace_secrets(root, policy.secret_globs)
    hidden_files += found
    if not complete:
        plan.complete = False
        plan.problems.append("not every secret file of the workspace could be listed and hidden")

    inside: list[str] = []
    for path in hidden_dirs:
        real = Path(os.path.realpath(path))
        if not real.is_dir():
            continue
        if _is_within(root, real):  # hiding it would hide the workspace
            plan.complete = False
            inside.append(str(path))
            continue
        args += ["--tmpfs", str(real), "--remount-ro", str(real)]
    for path in hidden_files:
        real = Path(os.path.realpath(path))
        if real.is_file():
            args += ["--ro-bind", "/dev/null", str(real)]
    config = Path(os.path.realpath(config_home()))
    if config.is_dir():
        if _is_within(root, config):
            plan.complete = False
            inside.append(str(config))
        else:
            args += ["--ro-bind", str(config), str(config)]
    if inside:
        plan.problems.append(f"the workspace is inside {', '.join(inside)}, which stays visible")
    plan.prefix += args
    return plan
