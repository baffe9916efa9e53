"""Settings (agentls/config.py) and their reference, docs/configuration.md."""

from __future__ import annotations

from pathlib import Path

from agentls.config import Settings

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def test_every_setting_has_a_row_in_the_configuration_reference() -> None:
    rows = {
        line.split("|")[1].strip().strip("`")
        for line in REFERENCE.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `")
    }
    keys = {field.alias or name for name, field in Settings.model_fields.items()}
    assert keys - rows == set(), "settings missing from docs/configuration.md's table"
    assert rows - keys == set(), "docs/configuration.md's table names settings that do not exist"
