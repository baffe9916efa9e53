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


# Programs of READ_ONLY_PROGRAMS that write with some options: their short letters and long
# names (any prefix of one counts, as getopt_long takes it): `tree -o f`, `file -C`, `date -s`;
# `tree -R` runs tree again in each directory with `-o 00Tree.html`.
_WRITING_SHORT = {"tree": "oR", "file": "C", "date": "s"}
_WRITING_LONG = {"tree": ("output",), "file": ("compile",), "date": ("set",)}
# Programs whose second operand is a file they write (`uniq IN OUT`, `xxd IN OUT`), with their
# options that take the next word as a value. `xxd -r` writes binary back (and can patch).
_VALUE_OPTIONS = {
    "uniq": frozenset({"-f", "-s", "-w"}),
    "xxd": frozenset({"-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-len", "-seek", "-name"}),
}


def _writes(command: Command) -> bool:
    """Whether an option or an operand makes this reader write (see _WRITING_SHORT and
    _VALUE_OPTIONS)."""
    name = command.name
    operands, skip, options_done = 0, False, False
    for word in command.argv[1:]:
        if skip:
            skip = False
        elif options_done or word == "-" or not word.startswith("-"):
            operands += 1
        elif word == "--":
            options_done = True
        elif name == "xxd" and word.startswith("-r"):
            return True
        elif word.startswith("--"):
            option = word[2:].split("=", 1)[0]
            if any(long.startswith(option) for long in _WRITING_LONG.get(name, ())):
                return True
        elif any(letter in word[1:] for letter in _WRITING_SHORT.get(name, "")):
            return True
        else:
            skip = word in _VALUE_OPTIONS.get(name, ())
    return name in _VALUE_OPTIONS and operands > 1


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
    return (
        command.name in READ_ONLY_PROGRAMS
        and risky_option(command) is None
        and not _writes(command)
    )


def is_read_only(line: str) -> bool:
    """Whether the line only reads (see the module's docstring)."""
    analysis = analyze(line)
    if not analysis.certain or analysis.writes or not analysis.commands:
        return False
    return all(_reads_only(c) for c in analysis.commands)
