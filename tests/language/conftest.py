"""The language tests' pieces: the real jedi-language-server, and a small Python project."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.config import Settings

# The one installed beside this Python (the dev dependencies install it into the venv).
JEDI = shutil.which("jedi-language-server", path=os.path.dirname(sys.executable)) or shutil.which(
    "jedi-language-server"
)


def language_servers(**extra: Any) -> dict[str, Any]:
    if JEDI is None:
        pytest.fail("jedi-language-server is not installed (pip install -e '.[dev]')")
    return {"python": {"command": [JEDI], "extensions": [".py"], **extra}}


def jedi_settings(**extra: Any) -> Settings:
    return Settings.model_validate({"languageServers": language_servers(**extra)})


GREET = '''"""Greetings."""


def greet(name):
    return "hello " + name


class Box:
    def size(self):
        return greet("box")
'''

MAIN = """from shop.greet import greet


def run():
    print(greet("world"))
    # greet is also in this comment, and "greet" in this string: not uses.
    return greet("again")
"""


def make_project(root: Path) -> Path:
    """shop/greet.py defines greet (used inside it once), app.py uses it twice."""
    (root / "shop").mkdir(parents=True, exist_ok=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "greet.py").write_text(GREET)
    (root / "app.py").write_text(MAIN)
    return root
