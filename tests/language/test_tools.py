"""The language tools on a small Python project with the real jedi-language-server: what each
returns, rename applied through write_all and checked on disk, and the read rules applied to
every file an answer names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentls.permission.rules import PermissionRules, secret_globs
from agentls.tools.base import ToolError
from agentls.tools.callers import CallersTool
from agentls.tools.definition import DefinitionTool
from agentls.tools.hover import HoverTool
from agentls.tools.references import ReferencesTool
from agentls.tools.rename import RenameTool
from agentls.tools.symbols import SymbolsTool
from agentls.verify.workspace import DiskWorkspace
from tests.language.conftest import GREET, MAIN, jedi_settings, make_project
from tests.tools.conftest import RunTool, ToolTestContext


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def run(root: Path) -> RunTool:
    """A context without language servers (DiskWorkspace without settings)."""
    ctx = ToolTestContext(root)

    async def _run(tool, **raw):  # type: ignore[no-untyped-def]
        return await tool.run(tool.parse(raw), ctx)

    return _run


@pytest.fixture
async def lctx(root: Path) -> AsyncIterator[ToolTestContext]:
    make_project(root)
    workspace = DiskWorkspace(root, jedi_settings)
    context = ToolTestContext(root, workspace)
    yield context
    await workspace.languages.aclose()


@pytest.fixture
def lrun(lctx: ToolTestContext) -> RunTool:
    async def _run(tool, **raw):  # type: ignore[no-untyped-def]
        return await tool.run(tool.parse(raw), lctx)

    return _run


async def test_symbols_in_the_workspace_and_in_one_file(
    lrun: RunTool, lctx: ToolTestContext
) -> None:
    found = await lrun(SymbolsTool(), query="greet")
    assert "function greet" in found.output and "shop/greet.py:4" in found.output
    outline = await lrun(SymbolsTool(), query="", path="shop/greet.py")
    assert (
        "class Box" in outline.output and "method size (in Box) shop/greet.py:9" in outline.output
    )
    assert lctx.queries[-1].tool == "symbols" and lctx.queries[-1].subject == "shop/greet.py"


async def test_definition_references_hover(lrun: RunTool) -> None:
    definition = await lrun(DefinitionTool(), path="app.py", symbol="greet", line=5)
    assert "`greet` at app.py:5:11" in definition.output
    assert "shop/greet.py (1)\n  4: def greet(name):" in definition.output

    refs = await lrun(ReferencesTool(), path="shop/greet.py", symbol="greet")
    out = refs.output
    assert "5 places in 2 files" in out
    assert 'app.py (3)\n  1: from shop.greet import greet\n  5: print(greet("world"))' in out
    assert "shop/greet.py (2)" in out and '10: return greet("box")' in out
    assert "comment" not in out  # not a use, though grep finds it

    hover = await lrun(HoverTool(), path="app.py", symbol="greet", line=7)
    assert "def greet(name)" in hover.output


async def test_callers_from_references_when_there_is_no_call_hierarchy(lrun: RunTool) -> None:
    callers = await lrun(CallersTool(), path="shop/greet.py", symbol="greet")
    out = callers.output
    assert '[function run] print(greet("world"))' in out
    assert '[method size] return greet("box")' in out
    assert "callers from its references" in out
    assert "def greet" not in out  # the definition is no call


async def test_rename_across_two_files_through_write_all(
    lrun: RunTool, lctx: ToolTestContext, root: Path
) -> None:
    with pytest.raises(ToolError, match="You have not read shop/greet.py"):
        await lrun(RenameTool(), path="shop/greet.py", symbol="greet", new_name="salute")
    lctx.ledger.record(root / "shop" / "greet.py", GREET)
    with pytest.raises(ToolError, match="1 file you have not read in this session: app.py"):
        await lrun(RenameTool(), path="shop/greet.py", symbol="greet", new_name="salute")
    assert (root / "app.py").read_text() == MAIN  # nothing changed
    lctx.ledger.record(root / "app.py", MAIN)

    result = await lrun(RenameTool(), path="shop/greet.py", symbol="greet", new_name="salute")
    assert "to `salute`: 5 places in 2 files" in result.output
    app = (root / "app.py").read_text()
    assert app == MAIN.replace("greet(", "salute(").replace("import greet", "import salute")
    assert "# greet is also in this comment" in app  # comments and strings are left alone
    assert (root / "shop" / "greet.py").read_text() == GREET.replace("greet(", "salute(")
    # One question for the whole change, with each file's texts and the combined diff.
    query = lctx.queries[-1]
    assert query.tool == "rename" and query.changes is not None
    assert sorted(c.path.name for c in query.changes) == ["app.py", "greet.py"]
    assert query.diff is not None and "a/app.py" in query.diff and "a/shop/greet.py" in query.diff
    # The model saw what it wrote: a later edit needs no new read.
    assert not lctx.ledger.changed_since_read(root / "app.py", app)

    # The server sees the renamed files (synced).
    refs = await lrun(ReferencesTool(), path="app.py", symbol="salute", line=5)
    assert "5 places in 2 files" in refs.output


async def test_rejected_rename_changes_nothing(
    lrun: RunTool, lctx: ToolTestContext, root: Path
) -> None:
    lctx.ledger.record(root / "shop" / "greet.py", GREET)
    lctx.ledger.record(root / "app.py", MAIN)
    lctx.deny_feedback = "keep the name"
    with pytest.raises(ToolError, match="keep the name"):
        await lrun(RenameTool(), path="shop/greet.py", symbol="greet", new_name="salute")
    assert (root / "app.py").read_text() == MAIN
    assert (root / "shop" / "greet.py").read_text() == GREET


async def test_a_secret_files_hits_are_left_out_and_counted(
    lrun: RunTool, lctx: ToolTestContext, root: Path
) -> None:
    (root / "shop" / "secret_keys.py").write_text(
        "from shop.greet import greet\nTOKEN = greet('k')\n"
    )
    lctx.rules = PermissionRules.from_config(None, secret_patterns=secret_globs(["secret_*.py"]))
    refs = await lrun(ReferencesTool(), path="shop/greet.py", symbol="greet")
    assert "secret_keys" not in refs.output and "TOKEN" not in refs.output
    assert "5 places in 2 files" in refs.output
    assert (
        "(2 places in secret files, files a rule denies or files outside the workspace left out.)"
        in refs.output
    )


async def test_clear_errors(lrun: RunTool, root: Path) -> None:
    with pytest.raises(ToolError, match="`greeting` does not occur in app.py as a whole word"):
        await lrun(ReferencesTool(), path="app.py", symbol="greeting")
    (root / "notes.md").write_text("greet\n")
    with pytest.raises(ToolError, match=r"no language server for \.md files.*Use grep and read"):
        await lrun(ReferencesTool(), path="notes.md", symbol="greet")


async def test_without_language_servers_the_tools_say_how_to_configure_them(
    run: RunTool, root: Path
) -> None:
    make_project(root)
    with pytest.raises(ToolError, match="`languageServers` setting names none"):
        await run(DefinitionTool(), path="app.py", symbol="greet")


async def test_a_definition_outside_the_workspace_is_left_out(lrun: RunTool, root: Path) -> None:
    (root / "paths.py").write_text("import os\n\nos.path.join('a', 'b')\n")
    result = await lrun(DefinitionTool(), path="paths.py", symbol="join", line=3)
    assert "none found" in result.output
    assert "(1 place in secret files, files a rule denies or files outside" in result.output
    assert "posixpath" not in result.output
