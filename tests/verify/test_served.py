"""A configured language server's diagnostics of the edited file itself (verify/served.py), with
the real `ruff server` started by agentls: what the syntax check cannot see, named by its
checker; nothing asked where no language server is configured."""

from __future__ import annotations

import sys
from pathlib import Path

from agentls.config import Settings
from agentls.verify.workspace import DiskWorkspace

RUFF = str(Path(sys.executable).with_name("ruff"))


async def test_an_undefined_name_is_reported_by_the_language_server(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {"languageServers": {"python": {"command": [RUFF, "server"], "extensions": [".py"]}}}
    )
    ws = DiskWorkspace(tmp_path, lambda: settings)
    try:
        path = tmp_path / "app.py"
        path.write_text("import os\n\n\ndef total():\n    return 1\n")
        outcome = await ws.write_text(
            path, "import os\n\n\ndef total():\n    return missing\n", path.read_text()
        )
        assert outcome.applied and outcome.diagnostics is not None
        lines = outcome.diagnostics.splitlines()
        # The unused import was there before: only the new problem is reported.
        assert lines[0] == (
            "Diagnostics (language server, from languageServers): 1 new problem(s) in app.py "
            "after this edit (Ruff: 1 error):"
        )
        assert lines[1] == "  line 5: error [Ruff] Undefined name `missing`"
        assert lines[2].startswith("Diagnostics (agentls syntax check only")
        # A file it creates starts from no diagnostics.
        new = tmp_path / "new.py"
        created = await ws.write_text(new, "print(nowhere)\n", None)
        assert created.diagnostics is not None
        assert "Undefined name `nowhere`" in created.diagnostics
    finally:
        await ws.languages.aclose()


async def test_without_a_configured_server_only_the_syntax_check_speaks(tmp_path: Path) -> None:
    ws = DiskWorkspace(tmp_path, lambda: Settings())
    path = tmp_path / "app.py"
    path.write_text("x = 1\n")
    outcome = await ws.write_text(path, "x = missing\n", "x = 1\n")
    assert outcome.diagnostics == (
        "Diagnostics (agentls syntax check only: not names, types or tests): "
        "no syntax errors in app.py."
    )
