"""The code action tests' pieces: ruff's language server (`ruff server`, installed beside this
Python by the dev dependencies), whose quick fixes and organize-imports are real code actions
with edits, and a project on which pyright offers a command-only action (create-type-stub)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

RUFF = Path(sys.executable).with_name("ruff")
PYRIGHT = (
    Path(__file__).parents[1]
    / "language"
    / "pyright"
    / "node_modules"
    / ".bin"
    / "pyright-langserver"
)

# `sys` is unused, and the imports are not sorted.
UNSORTED = "import sys\nimport os\n\n\ndef cwd():\n    return os.getcwd()\n"
SORTED = "import os\nimport sys\n\n\ndef cwd():\n    return os.getcwd()\n"


def ruff_servers() -> dict[str, Any]:
    if not RUFF.exists():
        pytest.fail("ruff is not installed beside this Python (pip install -e '.[dev]')")
    return {"ruff": {"command": [str(RUFF), "server"], "extensions": [".py"]}}


def pyright_servers() -> dict[str, Any]:
    if not PYRIGHT.exists():
        pytest.fail("pyright is not installed: make pyright-deps")
    return {"python": {"command": [str(PYRIGHT), "--stdio"], "extensions": [".py"]}}


def stubless_project(root: Path) -> Path:
    """app.py imports `fakepkg`, a package of the project's virtualenv without stubs, which
    pyright is told to report: its quick fix is "Create Type Stub", a command that writes
    typings/fakepkg/*.pyi itself."""
    package = root / "venv" / "lib" / "python3.11" / "site-packages" / "fakepkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def f(x):\n    return x\n")
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    config = {"venvPath": ".", "venv": "venv", "reportMissingTypeStubs": "error"}
    (root / "pyrightconfig.json").write_text(json.dumps(config))
    app = root / "app.py"
    app.write_text("import fakepkg\n\nprint(fakepkg.f(1))\n")
    return app
