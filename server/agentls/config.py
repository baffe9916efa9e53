"""Settings: defaults, then the user's config file, then the workspace's, then the front end's."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from agentls.history import WireModel
from agentls.model.catalog import DEFAULT_MODEL
from agentls.permission.rules import parse_rules


def config_home() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agentls"


class ThinkingSettings(WireModel):
    """Extended thinking: `{"type": "enabled", "budgetTokens": N}` or `{"type": "adaptive"}`
    (the model decides how much to think); "disabled" (the default) sends nothing."""

    type: Literal["enabled", "adaptive", "disabled"] = "enabled"
    budget_tokens: int | None = Field(default=None, ge=1024)
    display: Literal["summarized", "omitted"] | None = None


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
    # The longest wait between two attempts, retry-after included.
    api_max_retry_delay_s: float = Field(default=60.0, ge=0)
    # How long one model request may wait for the connection, or between two bytes of the
    # answer, before the attempt counts as failed (and is retried).
    api_timeout_s: float = Field(default=600.0, gt=0)
    # cache_control breakpoints on tools, system prompt and the newest messages.
    prompt_caching: bool = True
    # Overrides the model table's context window (a proxy with a smaller limit, or tests).
    context_window: int | None = Field(default=None, ge=1)
    # Compaction: once a step's context passes this share of the window, older history is
    # summarized and the session goes on from the summary plus about this many recent tokens.
    auto_compact: bool = True
    compact_threshold: float = Field(default=0.8, gt=0, le=1)
    compact_keep_recent_tokens: int = Field(default=20_000, ge=0)
    thinking: ThinkingSettings | None = None
    # More globs of files that hold secrets, on top of .env, *.pem, *.key and SSH keys: reading
    # them asks, and grep/glob leave them out ("*.secret" matches at any depth).
    secret_patterns: list[str] | None = None
    # Language server: how long to wait for the editor's diagnostics after an edit, and extra
    # checks to run after an edit when the editor pushes none ({"*.py": "ruff check {path}"}).
    verify_wait_s: float = Field(default=1.5, ge=0, le=30)
    verify_commands: dict[str, str] | None = None
    # How long to wait for the editor to answer workspace/applyEdit before reporting a failure.
    apply_edit_timeout_s: float = Field(default=30.0, gt=0)

    @field_validator("thinking", mode="before")
    @classmethod
    def _thinking_shorthand(cls, value: Any) -> Any:
        # "adaptive" / "enabled" / "disabled" stand for {"type": ...}.
        return {"type": value} if isinstance(value, str) else value

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
