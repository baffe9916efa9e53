"""Review "after" is never taken from an untrusted workspace's config: it would turn the edits a
repository's model makes into unasked ones. The user's own settings, a trusted workspace and
`agentls run --review after` set it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentls.config import load_settings
from agentls.trust import TrustStore, workspace_config


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "data"))
    root = tmp_path / "cloned"
    (root / ".agentls").mkdir(parents=True)
    (root / ".agentls" / "config.json").write_text(json.dumps({"review": "after"}))
    return root


def test_an_untrusted_workspace_cannot_set_review_after(repo: Path) -> None:
    settings = load_settings(repo)
    assert settings.review == "before"
    assert settings.untrusted_notice is not None and "review" in settings.untrusted_notice


def test_a_confirmed_config_and_the_command_line_set_it(repo: Path) -> None:
    assert load_settings(repo, workspace_trusted=True).review == "before", "not confirmed"
    config = workspace_config(repo)
    TrustStore().trust(config, config.read_bytes())
    assert load_settings(repo).review == "after"
    assert load_settings(repo, {"review": "after"}).review == "after"
