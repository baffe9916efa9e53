"""What a bash command line can run, read with the tree-sitter-bash grammar.

analyze(line) finds every simple command the line can run (lists, pipelines, subshells, command and
process substitutions, here-documents, function bodies, compound statements, the strings given to
`bash -c` and `eval`, parsed again), sees through wrappers (env, sudo, xargs, nohup, timeout, ...),
normalises each command word (`/bin/rm`, `\\rm`, `r''m`, `$'rm'` -> rm) and lists the files its
redirections and `tee` write. What it cannot be sure of goes into `problems`; the rules then ask or
deny (permission/bash_decision.py)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from agentls.permission.bash_names import (
    ARITH_NAME,
    CD_COMMANDS,
    DANGEROUS_PREFIXES,
    DANGEROUS_VARIABLES,
    INT_TESTS,
    MAX_DEPTH,
    NAME_OK,
    NOT_WRITES,
    NUMBER,
    OPAQUE_WRAPPERS,
    OUTPUT_REDIRECTS,
    SAFE_PREFIXES,
    SAFE_VARIABLES,
    SHELLS,
    TRANSPARENT_WRAPPERS,
)
from agentls.permission.bash_words import (
    WordValue,
    options_then_command,
    word_value,
)


@dataclass(frozen=True)
class Command:
    """One simple command. argv: its words, normalised (argv[0] the bare command name); words that
    are not literals keep their source text. literal: the command name is a plain literal name."""

    argv: tuple[str, ...]
    literal: bool = True
    wrappers: tuple[str, ...] = ()  # the wrappers it was seen through, outermost first
    path: str | None = None  # the command word as written when it named a directory ("./ls")

    @property
    def text(self) -> str:
        return " ".join(self.argv)

    @property
    def name(self) -> str:
        return self.argv[0] if self.argv else ""


@dataclass(frozen=True)
class BashAnalysis:
    commands: tuple[Command, ...]
    writes: tuple[str | None, ...]  # redirection and tee targets (`~` expanded); None: not literal
    problems: tuple[str, ...]  # why the analysis cannot be sure
    line: str = ""

    @property
    def certain(self) -> bool:
        return (
            not self.problems and all(c.literal for c in self.commands) and None not in self.writes
        )


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


def normalise_line(line: str) -> str:
    """The form an exact bash rule holds: the line without surrounding whitespace."""
    return line.strip()


def analyze(line: str) -> BashAnalysis:
    """What the line can run and write (`~` expanded with today's $HOME)."""
    return _analyze(line, os.environ.get("HOME", ""))


@lru_cache(maxsize=256)
def _analyze(line: str, home: str) -> BashAnalysis:
    walker = _Walker()
    try:
        walker.line(line, 0)
    except RecursionError:
        walker.problems.append("the line is nested too deeply to follow")
    writes = walker.writes
    if walker.changes_dir:  # `cd x && ls > f`: relative targets are no longer relative to root
        writes = [w if w is None or w.startswith("/") else None for w in writes]
    return BashAnalysis(
        commands=tuple(walker.commands),
        writes=tuple(writes),
        problems=tuple(dict.fromkeys(walker.problems)),
        line=line,
    )


@dataclass
class _Walker:
    commands: list[Command] = field(default_factory=list)
    writes: list[str | None] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    changes_dir: bool = False
    home_changed: bool = False

    def line(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.problems.append("commands nested deeper than the analysis follows")
            return
        if "\0" in text:
            self.problems.append("the line holds a NUL byte")
            text = text.replace("\0", " ")
        if any(ord(c) < 32 and c not in "\t\n" for c in text) or "\x7f" in text:
            self.problems.append("the line holds a control character")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            self.problems.append("the line is not valid text")
            data = text.encode("utf-8", "replace")
        tree = _parser().parse(data)
        if tree.root_node.has_error:
            self.problems.append("the line does not parse")
        self.node(tree.root_node, depth)

    # ---- the tree --------------------------------------------------------------------------

    def node(self, node: Node, depth: int) -> None:
        kind = node.type
        if kind == "command":
            self.command(node, depth)
            return
        if kind in ("declaration_command", "unset_command"):
            argv = [(node.children[0].text or b"").decode("utf-8", "replace")]
            for child in node.named_children:
                if child.type != "variable_assignment":
                    value = self.value(child)
                    argv.append(value.text if value else (child.text or b"").decode())
            self.commands.append(Command(argv=tuple(argv)))
            self.declaration(node, argv)
        elif kind == "variable_assignment":
            self.assignment(node)
        elif kind == "expansion":
            self.expansion(node)
        elif kind == "subscript":
            self.subscript(node)
        elif kind in ("arithmetic_expansion", "c_style_for_statement") or (
            kind == "compound_statement" and node.children and node.children[0].type == "(("
        ):
            self.arithmetic(_node_text(node))
        elif kind == "test_command":
            self.test_command(node)
        elif kind == "file_redirect":
            self.redirect(node)
        elif kind == "heredoc_redirect":
            self.heredoc(node)
        for child in node.children:
            self.node(child, depth)

    def assignment(self, node: Node, prefix: bool = False) -> None:
        name = node.child_by_field_name("name")
        var = _node_text(name) if name is not None else ""
        if prefix:
            self.check_prefix(var)
        else:
            self.check_variable(var)

    def check_variable(self, var: str) -> None:
        """A plain assignment (`x=1; ...`): later commands see it when bash exports it."""
        if var == "HOME":
            self.home_changed = True
        if var in DANGEROUS_VARIABLES or var.startswith(DANGEROUS_PREFIXES):
            self.problems.append(f"sets {var}, which changes what runs")

    def check_prefix(self, var: str) -> None:
        """A variable given to one command's environment (`VAR=x cmd`, `env VAR=x cmd`, export):
        only the harmless names of SAFE_VARIABLES keep the command's decision."""
        if var == "HOME":
            self.home_changed = True
        if var not in SAFE_VARIABLES and not var.startswith(SAFE_PREFIXES):
            self.problems.append(f"gives {var or 'a variable'} to a command's environment")

    def variable_name(self, name: str | None, what: str, sets: bool = True) -> None:
        """A word a builtin takes as a variable's name (printf -v, read, test -v, declare)."""
        if name is None:
            self.problems.append(f"{what}: the variable's name is not a literal")
        elif "[" in name:
            self.problems.append(f"{what}: `{name}` has a subscript bash evaluates as arithmetic")
        elif sets and (name in DANGEROUS_VARIABLES or name.startswith(DANGEROUS_PREFIXES)):
            self.problems.append(f"{what} sets {name}, which changes what runs")
        elif not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            self.problems.append(f"{what}: `{name}` is not a plain variable name")

    def declaration(self, node: Node, argv: list[str]) -> None:
        builtin = argv[0]
        flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
        if "n" in flags:
            self.problems.append(f"`{builtin} -n` makes a name reference")
        exported = builtin == "export" or (builtin in ("declare", "typeset") and "x" in flags)
        for child in node.named_children:
            if child.type == "variable_assignment":
                name = child.child_by_field_name("name")
                var = _node_text(name) if name is not None else ""
                if exported:
                    self.check_prefix(var)
                continue
            value = self.value(child)
            text = value.text if value is not None else None
            if text is not None and text.startswith(("-", "+")) and child.type == "word":
                continue
            if builtin == "unset" and text is not None and "[" not in text:
                continue
            if text is not None and "=" in text:
                text = text.split("=", 1)[0]
            self.variable_name(text, f"`{builtin}`")
            if exported and text is not None:
                self.check_prefix(text)

    def expansion(self, node: Node) -> None:
        kinds = [c.type for c in node.children]
        if len(kinds) > 1 and kinds[1] == "!":
            text = _node_text(node)
            if not re.fullmatch(r"\$\{![A-Za-z_][A-Za-z0-9_]*(?:\[[@*]\]|[@*])\}", text):
                self.problems.append("an indirect expansion `${!...}` (bash evaluates the name)")
        for k, child in enumerate(node.children):
            if child.type == ":" and k + 1 < len(node.children):
                rest = "".join(_node_text(c) for c in node.children[k + 1 : -1])
                self.arithmetic(rest)
                return

    def subscript(self, node: Node) -> None:
        index = node.child_by_field_name("index")
        if index is None:
            inner = [c for c in node.named_children[1:]]
            index = inner[0] if inner else None
        text = _node_text(index) if index is not None else ""
        if text not in ("@", "*") and not re.fullmatch(r"-?\d+", text):
            self.problems.append(f"the array subscript `{text}` is evaluated as arithmetic")

    def arithmetic(self, text: str) -> None:
        """Arithmetic (`$((..))`, `((..))`, `let`, `$[..]`, offsets): a variable's value is itself
        evaluated, and `a[$(cmd)]` in it runs cmd; only numbers and operators are certain."""
        body = NUMBER.sub("0", text)
        for opener in ("$((", "$[", "((", "for"):
            body = body.replace(opener, "", 1) if body.startswith(opener) else body
        if ARITH_NAME.search(body):
            self.problems.append("arithmetic that names a variable (its value is evaluated too)")

    def test_command(self, node: Node) -> None:
        double = bool(node.children) and node.children[0].type == "[["
        for expr in _descendants(node, ("unary_expression", "binary_expression")):
            op = next((c for c in expr.children if c.type == "test_operator"), None)
            if op is None:
                continue
            operator = _node_text(op)
            operands = [c for c in expr.named_children if c is not op]
            if operator in ("-v", "-R") and operands:
                self.variable_name(_literal(operands[0]), f"`{operator}`", sets=False)
            elif double and operator in INT_TESTS:
                for operand in operands:
                    if operand.type != "number":
                        self.arithmetic(_node_text(operand))

    def redirect(self, node: Node) -> None:
        op = next((c.type for c in node.children if not c.is_named), "")
        dest = node.child_by_field_name("destination")
        if op not in OUTPUT_REDIRECTS:
            return
        if dest is None:
            self.writes.append(None)
            return
        if op == ">&" or dest.type == "number":
            text = (dest.text or b"").decode("utf-8", "replace")
            if dest.type == "number" or re.fullmatch(r"\d*-?", text):
                return  # 2>&1, >&2, >&-: a descriptor, not a file
        self.write_target(self.value(dest))

    def heredoc(self, node: Node) -> None:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        quoted = start is not None and any(q in (start.text or b"") for q in (b"'", b'"', b"\\"))
        if body is not None and not quoted and b"`" in (body.text or b""):
            # tree-sitter-bash leaves backticks in a here-document's text unparsed
            self.problems.append("a here-document holds a backtick substitution")

    def write_target(self, value: WordValue | None) -> None:
        if value is None or value.special:
            self.writes.append(None)
            return
        target = value.text
        if value.tilde:
            if self.home_changed:
                self.writes.append(None)
                return
            target = os.path.expanduser(target)
        if NOT_WRITES.match(target):
            return
        self.writes.append(target)

    def value(self, node: Node) -> WordValue | None:
        return word_value(node)

    # ---- simple commands -------------------------------------------------------------------

    def command(self, node: Node, depth: int) -> None:
        name_node = node.child_by_field_name("name")
        for child in node.children:  # substitutions in arguments, assignments, redirects
            if child.type == "variable_assignment" and name_node is not None:
                self.assignment(child, prefix=True)  # `VAR=x cmd`: in cmd's environment
                for grandchild in child.children:
                    self.node(grandchild, depth)
            elif child.type != "command_name":
                self.node(child, depth)
            else:
                for grandchild in child.children:
                    self.node(grandchild, depth)
        if name_node is None:
            return  # only assignments / redirections
        words: list[WordValue | None] = [self.value(name_node)]
        raw: list[str] = [(name_node.text or b"").decode("utf-8", "replace")]
        for arg in node.children_by_field_name("argument"):
            words.append(self.value(arg))
            raw.append((arg.text or b"").decode("utf-8", "replace"))
        argv = [w.text if w is not None else r for w, r in zip(words, raw, strict=True)]
        literal = [w is not None and not w.special for w in words]
        self.simple(argv, literal, (), depth)

    def simple(
        self, argv: list[str], literal: list[bool], wrappers: tuple[str, ...], depth: int
    ) -> None:
        """One command's words (literal[i]: word i is a plain literal), wrappers seen through."""
        if not argv:
            return
        word = argv[0]
        path: str | None = None
        name = word
        if literal[0] and "/" in word:
            path = word
            name = word.rsplit("/", 1)[1]
        name_ok = literal[0] and bool(NAME_OK.match(name)) and not name.startswith("~")
        argv = [name, *argv[1:]]
        command = Command(argv=tuple(argv), literal=name_ok, wrappers=wrappers, path=path)
        if not name_ok:
            self.commands.append(command)
            return
        if name in CD_COMMANDS:
            self.changes_dir = True
        if name in TRANSPARENT_WRAPPERS or name in OPAQUE_WRAPPERS:
            if name in OPAQUE_WRAPPERS:
                self.commands.append(command)
            inner = self.unwrap(name, argv, literal, depth)
            if inner is None:
                if name in TRANSPARENT_WRAPPERS:
                    self.commands.append(command)
                return
            start = inner
            if start < len(argv):
                self.simple(argv[start:], literal[start:], (*wrappers, name), depth)
            elif name in TRANSPARENT_WRAPPERS:
                self.commands.append(command)
            return
        self.commands.append(command)
        self.code_arguments(name, argv, literal, depth)
        self.variable_arguments(name, argv, literal)
        if name == "tee":
            self.tee(argv, literal)

    def unwrap(self, name: str, argv: list[str], literal: list[bool], depth: int) -> int | None:
        """The index of the wrapped command's first word (len(argv): none); None when the words
        cannot be read (not literal where it matters), which is a problem."""
        if name == "find":
            self.find(argv, literal, depth)
            return len(argv)
        found = options_then_command(name, argv, literal, self, depth)
        if found is None:
            self.problems.append(f"cannot tell which command `{name}` runs")
        return found

    def find(self, argv: list[str], literal: list[bool], depth: int) -> None:
        i = 1
        while i < len(argv):
            if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(argv) and argv[j] not in (";", "+"):
                    j += 1
                if j > i + 1:
                    self.simple(argv[i + 1 : j], literal[i + 1 : j], ("find",), depth)
                i = j + 1
                continue
            if argv[i] in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(argv):
                self.writes.append(argv[i + 1] if literal[i + 1] else None)
            i += 1

    def tee(self, argv: list[str], literal: list[bool]) -> None:
        options = True
        for word, lit in zip(argv[1:], literal[1:], strict=True):
            if options and word == "--":
                options = False
                continue
            if options and word.startswith("-") and word != "-":
                continue
            self.write_target(WordValue(word, special=not lit))

    def code_arguments(self, name: str, argv: list[str], literal: list[bool], depth: int) -> None:
        """Arguments that are themselves shell code: `bash -c STRING`, eval, trap, alias."""
        if name in SHELLS:
            code = _shell_code(argv)
            if code is None:
                self.problems.append(f"`{name}` reads commands from its input or from an option")
            elif code >= 0:
                if literal[code]:
                    self.nested(argv[code], depth)
                else:
                    self.problems.append(f"the code given to `{name} -c` is not a literal")
        elif name == "eval":
            if all(literal[1:]):
                self.nested(" ".join(argv[1:]), depth)
            else:
                self.problems.append("the code given to eval is not a literal")
        elif name == "trap" and len(argv) > 2 and not argv[1].startswith("-"):
            if literal[1]:
                self.nested(argv[1], depth)
            else:
                self.problems.append("the code given to trap is not a literal")
        elif name == "alias":
            for word, lit in zip(argv[1:], literal[1:], strict=True):
                if "=" in word and lit:
                    self.nested(word.split("=", 1)[1], depth)
                elif "=" in word:
                    self.problems.append("an alias whose value is not a literal")

    def variable_arguments(self, name: str, argv: list[str], literal: list[bool]) -> None:
        """Builtins whose arguments are variable names or arithmetic (see variable_name)."""

        def word(i: int) -> str | None:
            return argv[i] if i < len(argv) and literal[i] else None

        if name == "let":
            for i in range(1, len(argv)):
                self.arithmetic(argv[i])
            if len(argv) == 1:
                return
        elif name == "printf":
            for i in range(1, len(argv)):
                if argv[i] == "-v":
                    self.variable_name(word(i + 1), "`printf -v`")
                elif argv[i].startswith("-v") and len(argv[i]) > 2:
                    self.variable_name(argv[i][2:] if literal[i] else None, "`printf -v`")
                elif argv[i] == "--" or not argv[i].startswith("-"):
                    break
        elif name in ("test", "["):
            for i in range(1, len(argv)):
                if argv[i] in ("-v", "-R") and literal[i] and i + 1 < len(argv):
                    self.variable_name(word(i + 1), f"`{name} {argv[i]}`", sets=False)
        elif name == "read":
            i = 1
            while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
                flag, step = argv[i], 1
                for k, c in enumerate(flag[1:], start=1):
                    if c in "adinNptu":
                        attached = flag[k + 1 :]
                        value = (attached if literal[i] else None) if attached else word(i + 1)
                        step = 1 if attached else 2
                        if c == "a":
                            self.variable_name(value, "`read -a`")
                        break
                i += step
            if i < len(argv) and argv[i] == "--":
                i += 1
            for j in range(i, len(argv)):
                self.variable_name(word(j), "`read`")
        elif name in ("mapfile", "readarray"):
            i = 1
            while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
                if argv[i].startswith("-C"):
                    self.problems.append(f"`{name} -C` runs a callback")
                i += 2 if argv[i] in ("-d", "-n", "-O", "-s", "-u", "-C", "-c") else 1
            if i < len(argv) and argv[i] == "--":
                i += 1
            for j in range(i, len(argv)):
                self.variable_name(word(j), f"`{name}`")
        elif name == "set":
            if any(
                a.startswith("-") and "a" in a[1:] and not a.startswith("--") for a in argv[1:]
            ) or ("allexport" in argv and "-o" in argv):
                self.problems.append("`set -a` exports every later assignment")

    def nested(self, code: str, depth: int) -> None:
        self.line(code, depth + 1)


def argument_names(command: Command) -> list[str]:
    """The words of a command's arguments as possible command names (basenames, split at shell
    punctuation, so `'!rm f'` and `-c 'rm f'` give rm): a deny rule's command named among them
    may be run by a program the analysis does not know (`flock l rm`, `ssh host rm`, `npx rm`)."""
    names: list[str] = []
    for word in command.argv[1:]:
        for token in re.findall(r"[A-Za-z0-9_.+:@%,^~/-]+", word):
            base = token.rstrip("/").rsplit("/", 1)[-1]
            if base:
                names.append(base)
    return names


def _node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _literal(node: Node) -> str | None:
    value = word_value(node)
    return value.text if value is not None and not value.special else None


def _descendants(node: Node, kinds: tuple[str, ...]) -> list[Node]:
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in kinds:
            found.append(current)
        stack.extend(current.children)
    return found


def _shell_code(argv: list[str]) -> int | None:
    """For `bash [options] ...`: the index of the -c string; -1 when it runs a script file; None
    when it reads commands from its input (or `-c` has no string)."""
    has_c = False
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1
            break
        if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word.startswith(("-", "+")) and len(word) > 1:
            if word.startswith("-") and "c" in word[1:]:
                has_c = True
            if "s" in word[1:]:
                return None
            i += 1
            continue
        break
    if i >= len(argv):
        return None
    return i if has_c else -1
