"""Whether a bash command line only reads: what plan mode lets run (session/modes.py).

A line is read-only when the analysis (permission/bash.py) is certain of it, it writes no file
(no redirection or tee target but /dev/null and the like), and every command it can run is a
program of READ_ONLY_PROGRAMS (git: a subcommand that only reads the repository) with no option
that runs a program or writes a file (bash_decision.risky_option). Anything else, and any line
the analysis cannot judge, is not read-only."""

from __future__ import annotations

from agentls.permission.bash import Command, analyze
from agentls.permission.bash_decision import risky_option
from agentls.permission.protected import SANDBOXED_GIT_EXACT, SANDBOXED_GIT_READS

# Programs that print what they read and change nothing (with risky_option's exceptions, e.g.
# `sed -i`, `sort -o`, `find -delete`).
READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "tree",
        "file", "stat", "du", "df", "pwd", "echo", "printf", "which", "type", "diff", "cmp",
        "sort", "uniq", "cut", "tr", "sed", "awk", "nl", "less", "more", "basename", "dirname",
        "realpath", "readlink", "date", "whoami", "uname", "env", "printenv", "true", "false",
        "test", "[", "jq", "cd", "md5sum", "sha1sum", "sha256sum", "column", "comm", "fold",
        "rev", "seq", "tac", "od", "xxd", "hexdump", "strings",
    }
)  # fmt: skip


def _git_reads(command: Command) -> bool:
    text = command.text
    if text in SANDBOXED_GIT_EXACT:
        return True
    return any(text == p or text.startswith(p + " ") for p in SANDBOXED_GIT_READS)


def _reads_only(command: Command) -> bool:
    if not command.literal or command.path is not None:
        return False  # `./ls` is a file of the workspace, not the program
    if command.name == "git":
        return _git_reads(command) and risky_option(command) is None
    return command.name in READ_ONLY_PROGRAMS and risky_option(command) is None


def is_read_only(line: str) -> bool:
    """Whether the line only reads (see the module's docstring)."""
    analysis = analyze(line)
    if not analysis.certain or analysis.writes or not analysis.commands:
        return False
    return all(_reads_only(c) for c in analysis.commands)
