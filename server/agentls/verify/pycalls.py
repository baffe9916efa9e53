"""agentls' own check of the uses of a Python definition, for an edit's reach (reach.py) when no
language server reports diagnostics for the file that uses it: the module's definitions and
their signatures (from its AST), and whether a use still fits (the name still exists; a call still
binds to the parameters)."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentls.verify.checks import diagnostic

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class PyDef:
    """A function, class or method of a module: its qualified name (C.m), where its name is (0-based
    line and column), its parameters (None for a class, or a function decorated otherwise than
    as a static or class method) and whether a call passes self/cls."""

    qualname: str
    line: int
    character: int
    signature: tuple[tuple[str, str], ...] | None
    bound: bool

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


def _name_column(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, line: str) -> int:
    """The column of a definition's name in its `def`/`class` line."""
    found = line.find(node.name, node.col_offset)
    return found if found >= 0 else node.col_offset


def _signature(args: ast.arguments) -> tuple[tuple[str, str], ...]:
    """The parameters as (kind, name) pairs, kind marking defaults: what a call binds against."""
    out: list[tuple[str, str]] = []
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    for i, arg in enumerate(positional):
        kind = "posonly" if i < len(args.posonlyargs) else "positional"
        out.append((kind + ("=" if i >= first_default else ""), arg.arg))
    if args.vararg is not None:
        out.append(("*", args.vararg.arg))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(("kwonly" + ("=" if default is not None else ""), arg.arg))
    if args.kwarg is not None:
        out.append(("**", args.kwarg.arg))
    return tuple(out)


def python_definitions(text: str) -> dict[str, PyDef] | None:
    """The module's functions and classes and their methods, by qualified name; None when the text
    does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines()
    found: dict[str, PyDef] = {}

    def visit(body: Iterable[ast.stmt], prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, FUNCTIONS + (ast.ClassDef,)):
                qualname = prefix + node.name
                source_line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
                column = _name_column(node, source_line)
                if isinstance(node, ast.ClassDef):
                    found[qualname] = PyDef(qualname, node.lineno - 1, column, None, False)
                    visit(node.body, qualname + ".", True)
                else:
                    names = {d.id if isinstance(d, ast.Name) else "" for d in node.decorator_list}
                    static = "staticmethod" in names
                    # Any other decorator may change what a call takes (click, fixtures, ...).
                    plain = names <= {"staticmethod", "classmethod"}
                    signature = _signature(node.args) if plain else None
                    found[qualname] = PyDef(
                        qualname, node.lineno - 1, column, signature, in_class and not static
                    )

    visit(tree.body, "", False)
    return found


def module_names(text: str) -> set[str]:
    """The names a module binds at its top level (definitions, assignments, imports)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, FUNCTIONS + (ast.ClassDef,)):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _binds(signature: tuple[tuple[str, str], ...], bound: bool, call: ast.Call) -> str | None:
    """Why the call no longer binds to the parameters (Python's own words), or None."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None  # *args / **kwargs: unknown at rest
    kinds = {
        "posonly": inspect.Parameter.POSITIONAL_ONLY,
        "positional": inspect.Parameter.POSITIONAL_OR_KEYWORD,
        "*": inspect.Parameter.VAR_POSITIONAL,
        "kwonly": inspect.Parameter.KEYWORD_ONLY,
        "**": inspect.Parameter.VAR_KEYWORD,
    }
    params = []
    for kind, name in signature[1:] if bound and signature else signature:
        default = None if kind.endswith("=") else inspect.Parameter.empty
        params.append(inspect.Parameter(name, kinds[kind.rstrip("=")], default=default))
    try:
        sig = inspect.Signature(params)
        sig.bind(*[None] * len(call.args), **{k.arg: None for k in call.keywords if k.arg})
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def utf8_column(line: str, utf16_column: int) -> int:
    """An LSP position's column (UTF-16 units) as the AST counts it (UTF-8 bytes)."""
    units = 0
    for index, char in enumerate(line):
        if units >= utf16_column:
            return len(line[:index].encode("utf-8"))
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line.encode("utf-8"))


def _node_at(tree: ast.AST, line: int, character: int, name: str) -> list[ast.AST]:
    """The chain of nodes (outermost first) down to the use of `name` at a 0-based position: a
    Name, an Attribute whose attribute it is, or an imported name."""
    path: list[ast.AST] = []

    def at(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id == name and node.lineno - 1 == line and node.col_offset == character
        if isinstance(node, ast.Attribute) and node.attr == name:
            end_line = (node.end_lineno or node.lineno) - 1
            width = len(name.encode("utf-8"))
            return end_line == line and (node.end_col_offset or 0) - width == character
        if isinstance(node, ast.alias):
            return node.name.split(".")[-1] == name and node.lineno - 1 == line
        return False

    def walk(node: ast.AST) -> bool:
        path.append(node)
        if at(node):
            return True
        for child in ast.iter_child_nodes(node):
            if walk(child):
                return True
        path.pop()
        return False

    walk(tree)
    return path


def use_problems(
    text: str,
    uses: Iterable[tuple[int, int]],
    definition: PyDef | None,
    name: str,
    where: str,
) -> list[dict[str, Any]]:
    """What is wrong with the uses of a definition (its name at each 0-based position) in a file's
    text, measured against `definition` (None: the module no longer defines it)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    problems: list[dict[str, Any]] = []
    lines = text.splitlines()
    for line, character in uses:
        source_line = lines[line] if 0 <= line < len(lines) else ""
        chain = _node_at(tree, line, utf8_column(source_line, character), name)
        if not chain:
            continue
        if definition is None:
            problems.append(
                diagnostic(line, character, f"'{name}' is no longer defined in {where}")
            )
            continue
        use, parent = chain[-1], chain[-2] if len(chain) > 1 else None
        if definition.signature is None or not isinstance(parent, ast.Call):
            continue
        if parent.func is not use:
            continue
        # obj.m(...) passes self; C.m(obj, ...) on the class itself does not.
        owner = definition.qualname.rsplit(".", 2)[-2] if "." in definition.qualname else None
        on_class = isinstance(use, ast.Attribute) and (
            isinstance(use.value, ast.Name) and use.value.id == owner
        )
        bound = definition.bound and isinstance(use, ast.Attribute) and not on_class
        why = _binds(definition.signature, bound, parent)
        if why is not None:
            problems.append(
                diagnostic(line, character, f"call of {definition.qualname}() ({where}): {why}")
            )
    return problems
