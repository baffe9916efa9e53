"""What jedi-language-server does not do, with a small real pygls server (tiny_server.py):
`callers` from the call hierarchy, and diagnostics pushed without a version."""

from __future__ import annotations

import sys
from pathlib import Path

from agentls.config import Settings
from agentls.tools.callers import CallersTool
from agentls.verify.workspace import DiskWorkspace
from tests.tools.conftest import ToolTestContext

TINY = str(Path(__file__).with_name("tiny_server.py"))
SOURCE = """def greet(name):
    return name


def run():
    greet("a")  # TODO: more


def other():
    return greet("b")
"""


def tiny_settings() -> Settings:
    return Settings.model_validate(
        {"languageServers": {"tiny": {"command": [sys.executable, TINY], "extensions": [".py"]}}}
    )


async def test_callers_from_the_call_hierarchy_and_unversioned_diagnostics(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    source = root / "mod.py"
    source.write_text(SOURCE)
    workspace = DiskWorkspace(root, tiny_settings)
    ctx = ToolTestContext(root, workspace)
    try:
        tool = CallersTool()
        result = await tool.run(tool.parse({"path": "mod.py", "symbol": "greet"}), ctx)
        out = result.output
        assert "2 callers" in out
        assert '6: [function run] greet("a")  # TODO: more' in out
        assert '10: [function other] return greet("b")' in out
        assert "no call hierarchy" not in out

        languages = workspace.languages
        uri = {"textDocument": {"uri": source.as_uri()}}
        report = await languages.request("textDocument/diagnostic", uri, source)
        assert [d["range"]["start"]["line"] for d in report["items"]] == [5]
        source.write_text(SOURCE + "# TODO: again\n")
        report = await languages.request("textDocument/diagnostic", uri, source)
        assert [d["range"]["start"]["line"] for d in report["items"]] == [5, 10]
    finally:
        await workspace.languages.aclose()
