"""What an "always" answer grants, exactly as the question shows it.

A path grant is that one literal path (Rule.exact: no glob, no `~`, no directory tree), never outside
the workspace. A bash grant is at most the command name and its subcommand for each command of the
line (`git status --porcelain` -> `git status`); for programs whose arguments are code or another
command (shells, interpreters, eval, env, xargs, sudo, ssh, the wrappers), for runners (`uv run`,
`npm exec`, `docker run`, `bundle exec`, ...) and for a line using an option that runs a program or
writes a file (`git log --output=f`, see bash_decision.risky_option) only the exact line."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from agentls.permission.bash import Command, analyze, normalise_line
from agentls.permission.bash_decision import resolve_write, risky_option
from agentls.permission.bash_names import SHELLS, WRAPPERS
from agentls.permission.rules import (
    DEFAULT_PORTS,
    FILE_TOOLS,
    WEBFETCH,
    Rule,
    rules_tool,
    split_origin,
)


@dataclass(frozen=True)
class Grant:
    rules: tuple[Rule, ...]
    label: str  # the words the question shows, e.g. "Always allow `git status` commands"


_VERBS = {
    "read": "reads of",
    "write": "writes of",
    "edit": "edits of",
    "glob": "file searches in",
    "grep": "text searches in",
    "list": "listings of",
}
# Programs whose arguments are code or name another command: an "always" is for the exact line.
CODE_PROGRAMS = (
    SHELLS
    | WRAPPERS
    | frozenset(
        {
            "eval",
            "source",
            ".",
            "trap",
            "alias",
            "ssh",
            "python",
            "python2",
            "python3",
            "pypy",
            "pypy3",
            "node",
            "nodejs",
            "deno",
            "bun",
            "perl",
            "ruby",
            "php",
            "lua",
            "awk",
            "gawk",
            "mawk",
            "nawk",
            "sed",
            "osascript",
            "powershell",
            "pwsh",
            "expect",
            "tclsh",
            "Rscript",
            "julia",
            "scp",
            "rsync",
            "npx",
            "uvx",
            "pipx",
        }
    )
)
_PYTHON_VERSION = re.compile(r"python\d+(?:\.\d+)*\Z")
# Programs whose first argument is a subcommand (`git status`, `npm test`): the grant keeps it.
SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "cargo",
        "go",
        "docker",
        "podman",
        "kubectl",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "make",
        "gh",
        "dotnet",
        "mvn",
        "gradle",
        "apt",
        "apt-get",
        "brew",
        "systemctl",
        "hatch",
        "pdm",
        "rye",
        "mix",
        "swift",
        "terraform",
        "helm",
    }
)
# Subcommands that run a program or script they are given (`uv run X`, `docker exec c X`): an
# "always" for them is the exact line, since `uv run` would cover `uv run bash -c ...`.
RUNNER_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "uv": frozenset({"run", "tool"}),
    "npm": frozenset({"exec", "x", "run", "run-script", "explore"}),
    "pnpm": frozenset({"exec", "dlx", "run", "x"}),
    "yarn": frozenset({"exec", "dlx", "run", "node"}),
    "poetry": frozenset({"run"}),
    "go": frozenset({"run", "generate", "tool"}),
    "cargo": frozenset({"run", "script"}),
    "docker": frozenset({"run", "exec", "compose", "build"}),
    "podman": frozenset({"run", "exec", "build"}),
    "kubectl": frozenset({"exec", "run", "debug", "attach"}),
    "hatch": frozenset({"run", "shell"}),
    "pdm": frozenset({"run"}),
    "rye": frozenset({"run"}),
    "gh": frozenset({"extension", "ext"}),
    "dotnet": frozenset({"run", "exec", "tool"}),
    "mvn": frozenset({"exec:exec", "exec:java"}),
    "mix": frozenset({"run", "eval"}),
    "swift": frozenset({"run"}),
    "git": frozenset({"bisect", "submodule", "filter-branch", "difftool", "mergetool"}),
}
# Runners whose first argument is already the program (`bundle exec x`, `pipenv run x`).
RUNNER_PROGRAMS = frozenset({"bundle", "pipenv", "conda", "mamba", "pixi", "nix", "nix-shell"})
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9:_-]*\Z")


def _show(text: str) -> str:
    """A subject as the label shows it: as is when plain, JSON-quoted when it holds a line break,
    a control character or a backtick (so the label cannot be made to say something else)."""
    if any(ord(c) < 32 or c in "`\x7f" for c in text):
        return json.dumps(text)
    return text


def grant_for(
    tool: str, subject: str, *, outside_workspace: bool = False, root: Path | None = None
) -> Grant | None:
    """The rules an "always" answer adds, and how the question words them; None when "always" is
    not offered (a path outside the workspace, a bash line the analysis is not sure of). `root`
    (bash only): the workspace root, so the files the line writes are granted too."""
    if "\0" in subject:
        return None
    tool = rules_tool(tool)  # a language tool's "always" is its read or edit rule's
    if tool == "bash":
        return _bash_grant(subject, root)
    if tool in FILE_TOOLS:
        return _path_grant(tool, subject, outside_workspace)
    if tool == WEBFETCH:
        return _host_grant(subject, private=outside_workspace)
    return Grant((Rule(tool=tool, action="allow"),), f"Always allow `{tool}` calls")


def _path_grant(tool: str, subject: str, outside_workspace: bool) -> Grant | None:
    parts = subject.split("/")
    if outside_workspace or not subject or subject.startswith("/") or ".." in parts:
        return None
    rule = Rule(tool=tool, pattern=subject, action="allow", exact=True)
    return Grant((rule,), f"Always allow {_VERBS[tool]} {_show(subject)}")


def _host_grant(subject: str, *, private: bool) -> Grant | None:
    """webfetch: that one origin, scheme, host and port (not the host's other ports, nor its
    subdomains), never for a private address (only a configured rule names one)."""
    scheme, host, port = split_origin(subject)
    if private or not host or any(c in host for c in "*?/[]{}") or subject != subject.strip():
        return None
    if scheme is not None and (scheme not in DEFAULT_PORTS or port is None):
        return None
    rule = Rule(tool=WEBFETCH, pattern=subject, action="allow", exact=True)
    return Grant((rule,), f"Always allow web fetches from {_show(subject)}")


def _bash_grant(line: str, root: Path | None) -> Grant | None:
    analysis = analyze(line)
    if not analysis.certain or not analysis.commands:
        return None
    writes: list[str] = []
    for target in analysis.writes:
        assert target is not None  # certain
        resolved = resolve_write(target, root) if root is not None else None
        if resolved is None or resolved[1]:
            return None  # outside the workspace (or nowhere to place it): no "always"
        writes.append(resolved[0])
    write_rules = tuple(
        Rule(tool="write", pattern=w, action="allow", exact=True) for w in dict.fromkeys(writes)
    )
    and_writes = ""
    if write_rules:
        and_writes = " and writes of " + ", ".join(_show(w) for w in dict.fromkeys(writes))

    prefixes: list[str] = []
    for command in analysis.commands:
        prefix = _prefix(command.argv, command.wrappers, command.path)
        if prefix is None:
            exact = normalise_line(line)
            rule = Rule(tool="bash", pattern=exact, action="allow", exact=True)
            return Grant((rule, *write_rules), f"Always allow exactly `{_show(exact)}`{and_writes}")
        prefixes.append(prefix)
    unique = list(dict.fromkeys(prefixes))
    rules = tuple(Rule(tool="bash", pattern=p, action="allow") for p in unique)
    names = " and ".join(f"`{_show(p)}`" for p in unique)
    return Grant((*rules, *write_rules), f"Always allow {names} commands{and_writes}")


def _prefix(argv: tuple[str, ...], wrappers: tuple[str, ...], path: str | None) -> str | None:
    """A command's grant prefix, None when only the exact line may be granted."""
    name = argv[0]
    if wrappers or path is not None or name in CODE_PROGRAMS or _PYTHON_VERSION.match(name):
        return None
    if name in RUNNER_PROGRAMS:
        return None
    if risky_option(Command(argv=argv)) is not None:
        return None  # `git log --output=f`: the prefix would not cover the line itself
    if name in SUBCOMMAND_PROGRAMS:
        if len(argv) < 2 or not _SUBCOMMAND.match(argv[1]):
            return None  # `git -c x=y status`: options before the subcommand can run programs
        if argv[1] in RUNNER_SUBCOMMANDS.get(name, ()):
            return None  # `uv run pytest`: `uv run` would run anything
        return f"{name} {argv[1]}"
    return name
