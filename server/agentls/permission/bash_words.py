"""Bash words as the literal strings bash would pass (quotes, backslashes and `$'..'` undone), and
the options of the wrappers bash.py sees through (which word is the command they run)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from tree_sitter import Node

_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_MASK = "\x00"  # stands for an escaped character when looking for unquoted specials


@dataclass(frozen=True)
class WordValue:
    text: str
    special: bool = False  # an unquoted glob or brace expansion: bash may turn it into other words
    tilde: bool = False  # starts with an unquoted `~`, which bash expands
    mask: str = _MASK  # the unquoted characters as written, anything quoted or escaped as _MASK


def _special(mask: str) -> bool:
    return (
        any(c in mask for c in "*?") or "[" in mask[: mask.rfind("]")] or bool(_BRACE.search(mask))
    )


def _unquoted(text: str) -> WordValue:
    out: list[str] = []
    mask: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                out.append(text[i + 1])
                mask.append(_MASK)
            i += 2
            continue
        out.append(c)
        mask.append(c)
        i += 1
    plain = "".join(mask)
    return WordValue("".join(out), special=_special(plain), tilde=plain.startswith("~"), mask=plain)


def _double_quoted(text: str) -> str:
    return re.sub(r'\\([\\"$`\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c(body: str) -> str:
    """The text of `$'body'`, escapes decoded as bash does."""
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
        elif e in "01234567":
            m = re.match(r"[0-7]{0,2}", body[i:])
            digits = e + (m.group(0) if m else "")
            i += len(digits) - 1
            out.append(chr(int(digits, 8) & 0xFF))
        elif e in "xuU":
            limit = {"x": 2, "u": 4, "U": 8}[e]
            m = re.match(f"[0-9a-fA-F]{{1,{limit}}}", body[i:])
            if not m:
                out.append("\\" + e)
                continue
            i += len(m.group(0))
            code = int(m.group(0), 16)
            out.append(chr(code) if code <= 0x10FFFF else "\ufffd")
        elif e == "c" and i < len(body):
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    return "".join(out)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def word_value(node: Node) -> WordValue | None:
    """The literal a word node stands for; None when bash computes it (an expansion, a
    substitution, arithmetic)."""
    kind = node.type
    if kind == "command_name":
        children = node.named_children
        return word_value(children[0]) if len(children) == 1 else None
    if kind == "word":
        return _unquoted(_text(node))
    if kind == "number":
        return WordValue(_text(node))
    if kind == "raw_string":
        return WordValue(_text(node)[1:-1])
    if kind == "ansi_c_string":
        return WordValue(ansi_c(_text(node)[2:-1]))
    if kind == "string":
        parts: list[str] = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type == "string_content":
                parts.append(_double_quoted(_text(child)))
            elif not child.is_named and child.type == "$":
                parts.append("$")
            else:
                return None
        return WordValue("".join(parts))
    if kind == "concatenation":
        values = [word_value(c) for c in node.children]
        if any(v is None for v in values):
            return None
        present = [v for v in values if v is not None]
        mask = "".join(v.mask for v in present)
        return WordValue(
            "".join(v.text for v in present),
            special=_special(mask),
            tilde=bool(present) and present[0].tilde,
            mask=mask,
        )
    return None


# ---- wrappers --------------------------------------------------------------------------------


class Walker(Protocol):
    problems: list[str]
    writes: list[str | None]

    def check_prefix(self, var: str) -> None: ...

    def nested(self, code: str, depth: int) -> None: ...


_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")


@dataclass(frozen=True)
class _Options:
    takes_arg: str = ""  # short options followed by a value
    long_arg: frozenset[str] = frozenset()  # long options followed by a value (unless `=`)
    positional: int = 0  # words after the options before the command (timeout's duration)
    assignments: bool = False  # VAR=value words before the command (env, sudo)
    writes: frozenset[str] = frozenset()  # options whose value is a file written (time -o)
    no_command: bool = False  # runs no command of its words (script: the rest is a file it writes)
    code_after: bool = False  # the word after the positionals is shell code (sg GROUP [-c] CODE)


_OPTIONS: dict[str, _Options] = {
    "command": _Options(),
    "builtin": _Options(),
    "exec": _Options(takes_arg="a"),
    "nohup": _Options(),
    "time": _Options(
        takes_arg="fo",
        long_arg=frozenset({"--format", "--output"}),
        writes=frozenset({"-o", "--output"}),
    ),
    "nice": _Options(takes_arg="n", long_arg=frozenset({"--adjustment"})),
    "timeout": _Options(
        takes_arg="sk", long_arg=frozenset({"--signal", "--kill-after"}), positional=1
    ),
    "stdbuf": _Options(takes_arg="ioe", long_arg=frozenset({"--input", "--output", "--error"})),
    "setsid": _Options(),
    "coproc": _Options(),
    "busybox": _Options(),
    "ionice": _Options(takes_arg="cnp", long_arg=frozenset({"--class", "--classdata", "--pid"})),
    "chrt": _Options(takes_arg="TPD", positional=1),
    "taskset": _Options(takes_arg="", positional=1),
    "unbuffer": _Options(),
    "caffeinate": _Options(takes_arg="tw"),
    "nocache": _Options(),
    "env": _Options(
        takes_arg="uCSP",
        long_arg=frozenset({"--unset", "--chdir", "--split-string"}),
        assignments=True,
    ),
    "sudo": _Options(
        takes_arg="ugUCDhprtTR",
        long_arg=frozenset(
            {
                "--user",
                "--group",
                "--other-user",
                "--close-from",
                "--chdir",
                "--host",
                "--prompt",
                "--role",
                "--type",
                "--command-timeout",
                "--chroot",
            }
        ),
        assignments=True,
    ),
    "doas": _Options(takes_arg="uC"),
    "xargs": _Options(
        takes_arg="adEILnPs",
        long_arg=frozenset(
            {
                "--arg-file",
                "--delimiter",
                "--eof",
                "--replace",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            }
        ),
    ),
    "runuser": _Options(
        takes_arg="ugGs", long_arg=frozenset({"--user", "--group", "--shell"}), positional=1
    ),
    "su": _Options(takes_arg="sgG", long_arg=frozenset({"--shell", "--group"}), positional=1),
    "watch": _Options(takes_arg="n", long_arg=frozenset({"--interval"})),
    "parallel": _Options(),
    "flock": _Options(
        takes_arg="wE", long_arg=frozenset({"--timeout", "--conflict-exit-code"}), positional=1
    ),
    "strace": _Options(
        takes_arg="abeEIoOpPsSuUX",
        long_arg=frozenset({"--output", "--trace", "--signal", "--user", "--attach", "--env"}),
        writes=frozenset({"-o", "--output"}),
    ),
    "ltrace": _Options(
        takes_arg="aADeFlnopsuwx", long_arg=frozenset({"--output"}), writes=frozenset({"-o"})
    ),
    "unshare": _Options(takes_arg="SGRwl"),
    "chroot": _Options(positional=1),
    "script": _Options(
        takes_arg="EIOBTm",
        long_arg=frozenset(
            {"--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format"}
        ),
        writes=frozenset({"-I", "-O", "-B", "-T", "--log-in", "--log-out", "--log-io"}),
        no_command=True,
    ),
    "sg": _Options(positional=1, code_after=True),
    "setpriv": _Options(
        long_arg=frozenset(
            {
                "--reuid",
                "--regid",
                "--ruid",
                "--rgid",
                "--euid",
                "--egid",
                "--groups",
                "--inh-caps",
                "--ambient-caps",
                "--bounding-set",
                "--securebits",
                "--pdeathsig",
                "--selinux-label",
                "--apparmor-profile",
                "--landlock-access",
                "--landlock-rule",
                "--seccomp-filter",
            }
        )
    ),
    "firejail": _Options(),
    "proot": _Options(takes_arg="rbwqkvm"),
}
_NO_COMMAND = {"sudo": ("-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K")}
_CODE_OPTIONS = {
    "su": ("-c", "--command"),
    "runuser": ("-c", "--command"),
    "env": ("-S", "--split-string"),
    "flock": ("-c", "--command"),
    "script": ("-c", "--command"),
}


def _code_option(name: str, word: str, spec: _Options) -> tuple[str, bool] | None:
    """For a wrapper with a code option (`su -c CODE`, `flock -c`, `script -qc`): (the code when
    attached to the word, whether it is); None when the word is not that option."""
    for option in _CODE_OPTIONS[name]:
        if option.startswith("--"):
            if word == option:
                return "", False
            if word.startswith(option + "="):
                return word.split("=", 1)[1], True
            continue
        letter = option[1]
        if not word.startswith("-") or word.startswith("--") or letter not in word[1:]:
            continue
        k = word.index(letter, 1)
        if any(c in spec.takes_arg for c in word[1:k]):
            continue
        return word[k + 1 :], bool(word[k + 1 :])
    return None


def options_then_command(
    name: str, argv: list[str], literal: list[bool], walker: Walker, depth: int
) -> int | None:
    """The index of the first word of the command `name` runs (len(argv): it runs none); None when
    it cannot be told (a word that matters is not a literal)."""
    spec = _OPTIONS.get(name, _Options())
    i = 1
    while i < len(argv):
        word = argv[i]
        if not literal[i]:
            return None
        if word == "--":
            i += 1
            break
        if name in _CODE_OPTIONS and _code_option(name, word, spec) is not None:
            code, attached = _code_option(name, word, spec)  # type: ignore[misc]
            if not attached:
                code = argv[i + 1] if i + 1 < len(argv) else None
            code_literal = attached or (i + 1 < len(argv) and literal[i + 1])
            if code is None or not code_literal:
                return None
            rest = argv[i + 2 :] if not attached else argv[i + 1 :]
            walker.nested(" ".join([code, *rest]) if name == "env" else code, depth)
            return len(argv)
        if word in _NO_COMMAND.get(name, ()):
            return len(argv)
        if word.startswith("--"):
            key = word.split("=", 1)[0]
            if key in spec.writes:
                target = (
                    word.split("=", 1)[1]
                    if "=" in word
                    else (argv[i + 1] if i + 1 < len(argv) else None)
                )
                walker.writes.append(target)
            i += 2 if key in spec.long_arg and "=" not in word else 1
            continue
        if word.startswith("-") and len(word) > 1 and not (name == "nice" and word[1:].isdigit()):
            step = 1
            for k, flag in enumerate(word[1:], start=1):
                if flag in spec.takes_arg:
                    attached = word[k + 1 :]
                    value = attached or (argv[i + 1] if i + 1 < len(argv) else None)
                    if "-" + flag in spec.writes:
                        walker.writes.append(
                            value if attached or (i + 1 < len(argv) and literal[i + 1]) else None
                        )
                    if not attached:
                        step = 2
                    break
            i += step
            continue
        if word == "-" and name == "env":
            i += 1
            continue
        break
    if spec.assignments:
        while i < len(argv) and literal[i] and _ASSIGNMENT.match(argv[i]):
            walker.check_prefix(_ASSIGNMENT.match(argv[i]).group(1))  # type: ignore[union-attr]
            i += 1
        if i < len(argv) and not literal[i] and "=" in argv[i]:
            return None
    if name == "nice" and i < len(argv) and re.fullmatch(r"-\d+", argv[i]):
        i += 1
    for _ in range(spec.positional):
        if i >= len(argv):
            break
        i += 1
    if name in _CODE_OPTIONS and i < len(argv) and _code_option(name, argv[i], spec) is not None:
        found = options_then_command(name, [name, *argv[i:]], [True, *literal[i:]], walker, depth)
        return None if found is None else min(len(argv), found + i - 1)
    if name in ("su", "runuser") and i < len(argv):
        return None  # `su USER ARGS...`: the arguments go to the user's shell
    if spec.no_command:
        for j in range(i, len(argv)):
            walker.writes.append(argv[j] if literal[j] else None)
        return len(argv)
    if spec.code_after:
        if i < len(argv) and argv[i] == "-c":
            i += 1
        if i >= len(argv):
            return len(argv)
        if not all(literal[i:]):
            return None
        walker.nested(" ".join(argv[i:]), depth)
        return len(argv)
    return min(i, len(argv))
