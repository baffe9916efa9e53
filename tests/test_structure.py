"""The house's rules, checked on the code itself (run by `make test`):

- no source file under server/agentls/ is over 600 lines;
- no import circle between the packages of agentls (each subpackage, and each top-level module
  such as config.py, is one node of the graph);
- the front ends (lsp/, acp/, cli/) import none of verify/, permission/, store/: they talk to the
  Agent's face (agentls.session) and the wire models (agentls.protocol).

Every import statement counts, wherever it is: at the top, inside a function (a "lazy" import is
how a circle is usually hidden), and under `if TYPE_CHECKING:` (no circle at run time, but still a
dependency a reader has to follow, and the next import moved out of that block makes it real).
The graph is read from the source with `ast`; circles are found by the standard library's
`graphlib` (a CycleError names one).
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parent.parent / "server" / "agentls"
MAX_LINES = 600
FRONT_ENDS = ("lsp", "acp", "cli")
CORE_ONLY = ("verify", "permission", "store")


def imports(path: Path) -> list[str]:
    """Every agentls module `path` imports (absolute imports; `from agentls import x` is x)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import (the project uses absolute ones)"
            if node.module == "agentls":
                found += [f"agentls.{alias.name}" for alias in node.names]
            elif node.module is not None:
                found.append(node.module)
    return [name for name in found if name.startswith("agentls.")]


def node_of(source: Path, path: Path) -> str:
    """The graph's node of a file: its subpackage, or its own name for a top-level module."""
    return path.relative_to(source).parts[0].removesuffix(".py")


def package_graph(source: Path) -> dict[str, set[str]]:
    """Node -> the nodes it imports (itself left out; agentls/__init__.py is no node)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(source.rglob("*.py")):
        if path.parent == source and path.name == "__init__.py":
            continue
        node = node_of(source, path)
        targets = {name.split(".")[1] for name in imports(path)}
        graph.setdefault(node, set()).update(targets - {node})
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of the graph (its nodes, the first repeated at the end), or None."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return None


def front_end_imports(source: Path) -> set[tuple[str, str]]:
    """(file, module) of every import of verify/, permission/ or store/ by a front end."""
    pairs = set()
    for front_end in FRONT_ENDS:
        for path in sorted((source / front_end).rglob("*.py")):
            for name in imports(path):
                if name.split(".")[1] in CORE_ONLY:
                    pairs.add((path.relative_to(source).as_posix(), name))
    return pairs


def test_no_source_file_is_over_600_lines() -> None:
    sizes = {
        path.relative_to(SOURCE.parent).as_posix(): len(path.read_bytes().splitlines())
        for path in SOURCE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert len(sizes) > 100  # the tree was found
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert over == {}, f"over {MAX_LINES} lines: split these by concern"


def test_no_import_circle_between_packages() -> None:
    graph = package_graph(SOURCE)
    assert {"session", "lsp", "acp", "cli", "verify", "workspace"} <= set(graph)
    found = circle(graph)
    assert found is None, "import circle between packages: " + " -> ".join(found or [])


def test_front_ends_import_none_of_verify_permission_store() -> None:
    assert {path.name for path in (SOURCE / "lsp").glob("*.py")} >= {"server.py", "propose.py"}
    found = front_end_imports(SOURCE)
    assert found == set(), "a front end imports the core's insides: go through the Agent's face"


# ---- the checks themselves, on a small tree ----------------------------------------------


def write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "importing",
    [
        "from agentls.alpha.one import x\n",
        "def later() -> None:\n    import agentls.alpha.one\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentls import alpha\n",
    ],
    ids=["top", "in-a-function", "type-checking"],
)
def test_a_circle_is_found_however_the_import_is_written(tmp_path: Path, importing: str) -> None:
    write(tmp_path, "alpha/one.py", "from agentls.beta.two import y\n")
    write(tmp_path, "beta/two.py", importing)
    write(tmp_path, "config.py", "from agentls.beta import two\n")
    graph = package_graph(tmp_path)
    assert graph == {"alpha": {"beta"}, "beta": {"alpha"}, "config": {"beta"}}
    assert set(circle(graph) or []) == {"alpha", "beta"}
    assert circle({"alpha": {"beta"}, "beta": set(), "config": {"beta"}}) is None


def test_a_front_end_import_of_the_core_insides_is_found(tmp_path: Path) -> None:
    write(tmp_path, "lsp/server.py", "from agentls.session import Agent\n")
    write(tmp_path, "cli/main.py", "def run() -> None:\n    from agentls.store import Store\n")
    write(tmp_path, "acp/server.py", "import agentls.verify.reach\n")
    assert front_end_imports(tmp_path) == {
        ("cli/main.py", "agentls.store"),
        ("acp/server.py", "agentls.verify.reach"),
    }
