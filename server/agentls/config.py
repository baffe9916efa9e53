"""Settings: defaults, then the user's config file, then the workspace's, then the front end's."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from agentls.history import WireModel
from agentls.model.catalog import DEFAULT_MODEL
from agentls.permission.rules import parse_rules


def config_home() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentls"


class Settings(WireModel):
    """What a user can configure. camelCase keys on the wire and in files (snake_case accepted)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    model: str = Field(default_factory=lambda: os.environ.get("AGENTLS_MODEL") or DEFAULT_MODEL)
    permissions: dict[str, Any] | list[dict[str, Any]] | None = None
    max_steps: int = Field(default=100, ge=1, le=10_000)
    max_tokens: int = Field(default=16_000, ge=1)
    approval_timeout_s: float = Field(default=30 * 60, gt=0)
    doom_loop_threshold: int = Field(default=3, ge=2)
    api_max_attempts: int = Field(default=5, ge=1)
    api_retry_base_delay_s: float = Field(default=1.0, ge=0)

    @field_validator("permissions")
    @classmethod
    def _check_permissions(cls, value: Any) -> Any:
        parse_rules(value)  # raises a clear error on a bad shape or action
        return value

    def merged(self, overrides: dict[str, Any]) -> Settings:
        data = self.model_dump(by_alias=False)
        data.update(
            Settings.model_validate(overrides).model_dump(by_alias=False, exclude_unset=True)
        )
        return Settings.model_validate(data)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def load_settings(workspace_root: Path | None, overrides: dict[str, Any] | None = None) -> Settings:
    """Defaults < ~/.config/agentls/config.json < <workspace>/.agentls/config.json < overrides."""
    settings = Settings()
    layers = [_read_json(config_home() / "config.json")]
    if workspace_root is not None:
        layers.append(_read_json(workspace_root / ".agentls" / "config.json"))
    layers.append(overrides or {})
    for layer in layers:
        if layer:
            settings = settings.merged(layer)
    return settings
