"""pyright as users run it headless (`languageServers` under `agentls run`): installed from npm
(make pyright-deps), started inside the bash sandbox as every headless server is. Its first
answer comes once it has loaded the workspace, and equals its warm answer (jedi-language-server's
too)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.config import Settings
from agentls.language.headless import use_launcher
from agentls.tools.references import ReferencesTool
from agentls.tools.support.sandbox import language_server_prefix
from agentls.tools.symbols import SymbolsTool
from agentls.verify.reach import describe_reach
from agentls.verify.workspace import DiskWorkspace
from messages_api import MessagesAPIServer, reply, text, tool_use
from tests.cli.test_cli import agentls
from tests.tools.conftest import ToolTestContext

PYRIGHT = Path(__file__).parent / "pyright" / "node_modules" / ".bin" / "pyright-langserver"
JEDI = str(Path(sys.executable).with_name("jedi-language-server"))

pytestmark = pytest.mark.skipif(
    not PYRIGHT.exists(), reason="pyright is not installed: make pyright-deps"
)

CORE = '''def take(n, iterable):
    """The first n items."""
    return list(iterable)[:n]


def chunked(iterable, n):
    out = []
    items = list(iterable)
    while items:
        out.append(take(n, items))
        items = items[n:]
    return out
'''


def pyright_settings(command: list[str] | None = None) -> Settings:
    command = command or [str(PYRIGHT), "--stdio"]
    return Settings.model_validate(
        {
            "sandbox": "auto",
            "languageServers": {"python": {"command": command, "extensions": [".py"]}},
        }
    )


def repository(root: Path) -> None:
    """A package whose `take` is used in 5 other files, among 40 more modules to load."""
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(CORE)
    for n in range(1, 6):
        (root / "pkg" / f"use{n}.py").write_text(
            f"from pkg.core import take\n\n\ndef first_{n}(xs):\n    return take({n}, xs)\n"
        )
    for n in range(40):
        (root / "pkg" / f"filler{n}.py").write_text(f"def filler_{n}(x):\n    return x + {n}\n")


@pytest.fixture
def sandboxed() -> Iterator[None]:
    """Headless servers started in the sandbox, as the Agent has them (session/agent.py)."""
    use_launcher(language_server_prefix)
    yield
    use_launcher(None)


@pytest.mark.parametrize("server", ["pyright", "jedi-language-server"])
async def test_the_first_references_and_symbols_are_the_servers_warm_answers(
    tmp_path: Path, sandboxed: None, server: str
) -> None:
    root = tmp_path.resolve()
    repository(root)
    settings = pyright_settings(None if server == "pyright" else [JEDI])
    workspace = DiskWorkspace(root, lambda: settings)
    ctx = ToolTestContext(root, workspace)
    try:
        tool = ReferencesTool()
        params = tool.parse({"path": "pkg/core.py", "symbol": "take"})
        first = (await tool.run(params, ctx)).output
        warm = (await tool.run(params, ctx)).output
        symbols = SymbolsTool()
        found = (await symbols.run(symbols.parse({"query": "filler_3"}), ctx)).output
    finally:
        await workspace.languages.aclose()
    # The definition, its use in chunked, and the import and call in each of the 5 files.
    assert "12 places in 6 files" in first, first
    assert first == warm
    assert "still loading" not in first
    assert "filler_3" in found and "No symbols matching" not in found, found


async def test_an_edit_that_breaks_another_file_reports_pyrights_error(
    tmp_path: Path, sandboxed: None
) -> None:
    root = tmp_path.resolve()
    repository(root)
    settings = pyright_settings()
    workspace = DiskWorkspace(root, lambda: settings)
    try:
        core = root / "pkg" / "core.py"
        old = core.read_text()
        new = old.replace("def take(n, iterable):", "def take(n, iterable, key):")
        outcome = await workspace.write_text(core, new, old)
    finally:
        await workspace.languages.aclose()
    assert outcome.applied and outcome.diagnostics is not None and outcome.reach is not None
    # chunked's own call in the edited file, and the calls in the files that use take, each
    # pyright's error.
    missing = 'error [Pyright] Argument missing for parameter "key"'
    assert f"line 10: {missing}" in outcome.diagnostics, outcome.diagnostics
    said = describe_reach(outcome.reach, lambda p: p.relative_to(root).as_posix(), lambda p: True)
    assert "new error(s) in 5 file(s)" in said, said
    assert f"  pkg/use1.py:\n    line 5: {missing}" in said, said


def test_agentls_run_with_pyright_answers_whole_at_once_and_reports_a_broken_caller(
    api: MessagesAPIServer, env: dict[str, str], tmp_path: Path
) -> None:
    """As a user runs it: `agentls run` with pyright in the user's config, the model's first
    question and then an edit that changes a signature other files call."""
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    repository(root)
    config = tmp_path / "config" / "agentls" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(pyright_settings().model_dump(by_alias=True, exclude_unset=True)))
    old = "def take(n, iterable):"
    edit = {"path": "pkg/core.py", "old_string": old, "new_string": "def take(n, iterable, key):"}
    api.enqueue(
        reply(tool_use("references", {"path": "pkg/core.py", "symbol": "take"})),
        reply(tool_use("read", {"path": "pkg/core.py"})),
        reply(tool_use("edit", edit)),
        reply(text("Done.")),
    )
    proc = agentls("run", "--cwd", str(root), "--yes", "add a key to take", env=env, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = [
        b["content"]
        for r in api.requests[1:]
        for b in r.body["messages"][-1]["content"]
        if b["type"] == "tool_result"
    ]
    assert "12 places in 6 files" in results[0] and "still loading" not in results[0]
    edited = next(r for r in results if r.startswith("Edited pkg/core.py"))
    others = edited[edited.index("Other files using what this edit changed (take)") :]
    assert '    line 5: error [Pyright] Argument missing for parameter "key"' in others, edited
    assert "unknown method" not in proc.stderr and "Ignoring notification" not in proc.stderr
