"""The words of bash the command-line analysis (permission/bash.py) knows: shells, wrappers, the
variables that change what runs and the few that are harmless, and the small patterns it reads
words with."""

from __future__ import annotations

import re

MAX_DEPTH = 6  # bash -c 'bash -c "..."': deeper than this is a problem, not a recursion

# Variables whose value changes which program runs or what it loads.
DANGEROUS_VARIABLES = frozenset(
    {
        "PATH",
        "BASH_ENV",
        "ENV",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "CDPATH",
        "HOME",
        "GLOBIGNORE",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "NODE_OPTIONS",
        "NODE_PATH",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "GIT_EXEC_PATH",
        "GIT_EDITOR",
        "GIT_PAGER",
        "GIT_CONFIG",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_DIR",
        "GIT_TEMPLATE_DIR",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "PROMPT_COMMAND",
        "BROWSER",
        "LESSOPEN",
        "LESSCLOSE",
        "MANPAGER",
        "SHELL",
    }
)
DANGEROUS_PREFIXES = (
    "LD_",
    "GIT_",
    "XDG_",
    "BASH_",
    "DYLD_",
    "NPM_CONFIG_",
    "npm_config_",
)
# The only variables a command may be given by a prefix (`LANG=C ls`, `env TZ=UTC date`) or by
# `export` and keep its decision: they change how it prints, not what it runs or writes. Any
# other name is a problem (an allowlist: GIT_EXTERNAL_DIFF, XDG_CONFIG_HOME, ... run code).
SAFE_VARIABLES = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "TERM",
        "COLUMNS",
        "LINES",
        "CI",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "NODE_ENV",
        "RUST_BACKTRACE",
        "RUST_LOG",
    }
)
SAFE_PREFIXES = ("LC_", "CLICOLOR")
# Builtins whose arguments name variables: a name with a subscript (`a[$(cmd)]`) is evaluated as
# arithmetic, which runs the substitution; a dangerous name changes what later commands run.
VARIABLE_NAME_BUILTINS = frozenset({"printf", "read", "mapfile", "readarray", "test", "unset"})
NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|\d+#[0-9A-Za-z@_]+|\d+")
ARITH_NAME = re.compile(r"[A-Za-z_$`\[\\'\"]")
INT_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})

SHELLS = frozenset(
    {"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash"}
)
# Commands that run the rest of their words as a command, with nothing else to judge: the inner
# command is judged alone (its own rules), the wrapper's name kept in Command.wrappers.
TRANSPARENT_WRAPPERS = frozenset(
    {
        "command",
        "builtin",
        "exec",
        "nohup",
        "time",
        "nice",
        "timeout",
        "stdbuf",
        "setsid",
        "coproc",
        "env",
        "busybox",
        "ionice",
        "chrt",
        "taskset",
        "unbuffer",
        "caffeinate",
        "nocache",
    }
)
# Commands that run another command they are given, and are judged themselves too.
OPAQUE_WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "xargs",
        "find",
        "su",
        "runuser",
        "watch",
        "parallel",
        "flock",
        "strace",
        "ltrace",
        "unshare",
        "chroot",
        "script",
        "sg",
        "setpriv",
        "firejail",
        "proot",
    }
)
WRAPPERS = TRANSPARENT_WRAPPERS | OPAQUE_WRAPPERS
CD_COMMANDS = frozenset({"cd", "pushd", "popd"})
NAME_OK = re.compile(r"[A-Za-z0-9_.+:@%,=^~-]+\Z")
NOT_WRITES = re.compile(r"/dev/(?:null|stdout|stderr|fd/\d+)\Z")
OUTPUT_REDIRECTS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&"})
