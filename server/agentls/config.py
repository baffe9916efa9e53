"""Settings: defaults, then the user's config file, then the workspace's, then the front end's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr, field_validator

from agentls.config_files import MAX_WORKSPACE_CONFIG_BYTES as MAX_WORKSPACE_CONFIG_BYTES
from agentls.config_files import parse_json_object as parse_json_object
from agentls.config_files import read_workspace_bytes as read_workspace_bytes
from agentls.config_home import config_home
from agentls.environ_scrub import keep_credentials
from agentls.model.catalog import DEFAULT_MODEL
from agentls.model.providers import ProviderSettings
from agentls.model.thinking import ThinkingSettings
from agentls.permission.rules import Rule, parse_rules
from agentls.wire import WireModel

if TYPE_CHECKING:
    from agentls.trust import TrustStore
    from agentls.trust_pending import PendingConfig


class LanguageServerConfig(WireModel):
    """One language server agentls starts itself (headless, or for files the editor's servers do
    not cover): `languageServers` {"python": {"command": ["jedi-language-server"], "extensions":
    [".py"]}}. It names a program to run, so an untrusted workspace config may not set it."""

    command: list[str] = Field(min_length=1)
    extensions: list[str] = Field(min_length=1)  # ".py"; the files this server answers for
    initialization_options: dict[str, Any] | None = None
    # How long one request may take; languageTimeoutS when unset.
    timeout_s: float | None = Field(default=None, gt=0)


class AgentType(WireModel):
    """A sub-agent type (the `agents` setting): what the task tool's child session runs with."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    description: str = ""
    # Added to the task's prompt, before it: the sub-agent's own instructions.
    prompt: str = ""
    # The tools it may use (names); None: the read-only ones. Never `task` (depth 1).
    tools: list[str] | None = None
    # Its model id; None: the parent session's.
    model: str | None = None


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
    # Model providers by name, for model ids `<name>/<model>` (see model/providers.py):
    # {"local": {"type": "openai", "baseUrl": ..., "apiKeyEnv"?, "models"?}, "bedrock":
    # {"type": "bedrock", "region"?}, "vertex": {"type": "vertex", "region"?, "project"?}}.
    # Never from an untrusted workspace (trust.py ignores it: a baseUrl sends code elsewhere).
    providers: dict[str, ProviderSettings] | None = None
    # More globs of files that hold secrets, on top of .env, *.pem, *.key and SSH keys: reading
    # them asks, and grep/glob leave them out ("*.secret" matches at any depth).
    secret_patterns: list[str] | None = None
    # The bash sandbox (bubblewrap, see tools/support/sandbox.py): "auto" uses it when it works here,
    # "required" refuses to run bash without it, "off" never uses it. sandboxNetwork: commands
    # in the sandbox may use the network. sandboxHomeReadable: more folders or files of $HOME
    # (relative to it) that sandboxed commands may read, beside the tool folders shown by default
    # (tools/support/sandbox.py HOME_READABLE); the rest of $HOME is an empty folder there.
    sandbox: Literal["auto", "off", "required"] = "auto"
    sandbox_network: bool = False
    sandbox_home_readable: list[str] | None = None
    # Language server: how long to wait for the editor's diagnostics after an edit, and extra
    # checks to run after an edit when the editor pushes none ({"*.py": "ruff check {path}"}).
    verify_wait_s: float = Field(default=1.5, ge=0, le=30)
    verify_commands: dict[str, str] | None = None
    # The finish gate (session/finish_gate.py): before a turn ends, the files it changed and
    # those using what it changed are checked again; the "errors" (or "warnings" too) it
    # introduced go back to the model, at most finishGateSteps times. "off": never.
    finish_gate: Literal["errors", "warnings", "off"] = "errors"
    finish_gate_steps: int = Field(default=2, ge=0, le=10)
    # MCP servers, Claude Code's shape (see agentls/mcp/config.py): each layer adds servers to
    # the ones before it (a name again replaces that server). Never from an untrusted workspace.
    mcp_servers: dict[str, Any] | None = None
    # How long to wait for the editor to answer workspace/applyEdit before reporting a failure.
    apply_edit_timeout_s: float = Field(default=30.0, gt=0)
    # How long to wait for a language server's answer (the editor's agent/languageRequest, or a
    # server agentls started) before the tool reports that it timed out.
    language_timeout_s: float = Field(default=15.0, gt=0)
    # Language servers agentls starts itself, by language (agentls.language.headless).
    language_servers: dict[str, LanguageServerConfig] | None = None
    # Sub-agent types for the task tool (session/subagents.py): {name: {description, prompt,
    # tools, model}}; tools default to the read-only ones. Never from an untrusted workspace
    # (trust.py keeps only what tightens). At most maxParallelTasks run at once.
    agents: dict[str, AgentType] | None = None
    max_parallel_tasks: int = Field(default=4, ge=1, le=32)
    # When the user reviews the agent's edits: "before" (each edit a rule asks about waits for an
    # answer) or "after" (it is applied at once and kept pending review: agent/review keeps or
    # undoes it). Never "after" from an untrusted workspace (trust.py: it would loosen).
    review: Literal["before", "after"] = "before"
    # Background sessions (session/background.py): at most backgroundLimit run at once, each in
    # a git worktree under backgroundWorktreeFolder (None: <git common dir>/agentls-worktrees).
    background_limit: int = Field(default=3, ge=1, le=32)
    background_worktree_folder: str | None = None
    # A shell command run in each new worktree before its session starts (installing its
    # dependencies). It runs a program: never from an untrusted workspace config.
    background_setup: str | None = None

    # Set by load_settings, never read from a file or the wire: an untrusted workspace config's
    # deny and ask rules (each only makes a call stricter), and the line that tells the user
    # what of that file was ignored (see agentls.trust).
    _workspace_restrictions: tuple[Rule, ...] = PrivateAttr(default=())
    _untrusted_notice: str | None = PrivateAttr(default=None)
    # Whether the workspace is trusted (the editor says so, or `agentls trust` recorded its
    # config's exact content): its .agentls/commands count only then (session/commands.py).
    _workspace_trusted: bool = PrivateAttr(default=False)
    # The workspace config files new or changed since the user confirmed them (not applied;
    # the front end asks: see agentls.trust_pending).
    _pending_configs: tuple[PendingConfig, ...] = PrivateAttr(default=())

    @property
    def workspace_trusted(self) -> bool:
        return self._workspace_trusted

    @property
    def pending_configs(self) -> tuple[PendingConfig, ...]:
        return self._pending_configs

    @property
    def workspace_restrictions(self) -> tuple[Rule, ...]:
        return self._workspace_restrictions

    @property
    def untrusted_notice(self) -> str | None:
        """ "agentls: ignored allow rules ... in FILE: ... (run `agentls trust DIR` ...)", or None."""
        return self._untrusted_notice

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

    @field_validator("background_worktree_folder")
    @classmethod
    def _check_worktree_folder(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).expanduser().is_absolute():
            raise ValueError("backgroundWorktreeFolder must be an absolute path or start with ~")
        return value

    def merged(self, overrides: dict[str, Any]) -> Settings:
        data = self.model_dump(by_alias=False)
        more = Settings.model_validate(overrides).model_dump(by_alias=False, exclude_unset=True)
        if more.get("mcp_servers") is not None and data.get("mcp_servers"):
            more["mcp_servers"] = {**data["mcp_servers"], **more["mcp_servers"]}
        data.update(more)
        return Settings.model_validate(data)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return parse_json_object(path, raw)


def load_settings(
    workspace_root: Path | None,
    overrides: dict[str, Any] | None = None,
    *,
    workspace_trusted: bool = False,
    editor: bool = False,
) -> Settings:
    """Defaults < ~/.config/agentls/config.json < <workspace>/.agentls/config.json < overrides.

    A workspace file (.agentls/config.json, .mcp.json) counts in full only in the exact content
    the user confirmed (agentls.trust). One that is new or changed since is not applied: the
    content last confirmed applies instead (or none), its deny and ask rules still tighten
    (agentls.trust.restrict), `untrusted_notice` says what was ignored, and `pending_configs`
    lists it for the front end to ask about (agentls.trust_pending). `workspace_trusted` (the
    editor trusts the workspace) does not confirm any content: it lets the workspace's
    .agentls/commands count, and `editor` words the notice for an editor."""
    from agentls.trust import TrustStore, restrict, workspace_config
    from agentls.trust_pending import pending_config, pending_deletion, pending_hooks

    user = _read_json(config_home() / "config.json")
    layers = [user]
    untrusted = None
    trusted = workspace_trusted
    pending: list[PendingConfig] = []
    mcp_notice = None
    if workspace_root is not None:
        store = TrustStore()
        path = workspace_config(workspace_root)
        data = read_workspace_bytes(path)
        if data is None:
            # Deleted since it was confirmed: what was confirmed applies until the user agrees.
            gone = pending_deletion(store, path, "config")
            confirmed = None if gone is None else _confirmed_layer(path, gone)
            if gone is not None and confirmed is not None:
                pending.append(gone)
                layers.append(confirmed)
        else:
            layer = parse_json_object(path, data)
            waiting = pending_config(store, path, "config", data)
            if waiting is None:
                layers.append(layer)
                trusted = True
            else:
                pending.append(waiting)
                untrusted = restrict(path, layer, _state(waiting))
                confirmed = _confirmed_layer(path, waiting)
                if confirmed is not None:
                    layers.append(confirmed)
        mcp_layer, mcp_notice, mcp_waiting = _mcp_json(store, workspace_root, editor)
        if mcp_layer:
            layers.insert(1, mcp_layer)  # after the user's config, before the workspace's
        if mcp_waiting is not None:
            pending.append(mcp_waiting)
        if trusted:  # its Claude Code settings' hooks run programs: asked about too
            pending += pending_hooks(store, workspace_root)
    layers.append(overrides or {})
    settings = Settings()
    for layer in layers:
        if layer:
            settings = settings.merged(layer)
    if untrusted is not None:
        extra = untrusted.kept.get("secretPatterns")
        if extra is not None:
            try:
                more = Settings.model_validate({"secretPatterns": extra}).secret_patterns or []
            except ValueError as exc:
                raise ValueError(f"{untrusted.file}: secretPatterns: {exc}") from exc
            settings = settings.model_copy(
                update={"secret_patterns": [*(settings.secret_patterns or []), *more]}
            )
        settings._workspace_restrictions = tuple(untrusted.restrictions)
        settings._untrusted_notice = untrusted.notice(editor=editor)
    settings._workspace_trusted = trusted and workspace_root is not None
    settings._pending_configs = tuple(pending)
    deleted = [_deletion_notice(p.file) for p in pending if p.change == "deleted"]
    if mcp_notice is not None or deleted:
        notices = [settings._untrusted_notice, mcp_notice, *deleted]
        settings._untrusted_notice = "\n".join(n for n in notices if n)
    # A provider's key stays out of bash's environment before that provider is first used.
    keep_credentials(p.api_key_env for p in (settings.providers or {}).values() if p.api_key_env)
    return settings


def _deletion_notice(file: Path) -> str:
    import shlex

    root = file.parent.parent if file.name == "config.json" else file.parent
    return (
        f"agentls: {file} was deleted; the content you confirmed still applies (confirm the "
        f"deletion when asked, or run `agentls trust --revoke {shlex.quote(str(root))}`)"
    )


def _state(waiting: PendingConfig) -> Literal["changed", "untrusted"]:
    return "changed" if waiting.change == "changed" else "untrusted"


def _confirmed_layer(path: Path, waiting: PendingConfig) -> dict[str, Any] | None:
    """The content the user last confirmed, as a layer (it applies while the file says something
    not confirmed); None when none is kept, or it is not valid settings (so fixing a bad config
    is never blocked by the bad one)."""
    if waiting.old_text is None:
        return None
    try:
        layer = parse_json_object(path, waiting.old_text)
        Settings.model_validate(layer)
    except ValueError:
        return None
    return layer


def _mcp_json(
    store: TrustStore, root: Path, editor: bool
) -> tuple[dict[str, Any] | None, str | None, PendingConfig | None]:
    """The `mcpServers` of the workspace's .mcp.json (Claude Code's project file) as a layer, in
    the content the user confirmed; when the file says something else: the confirmed content's
    servers (or none), the line that says the file was ignored, and the PendingConfig to ask
    about. Its servers would run programs."""
    from agentls.trust import mcp_json, why_untrusted
    from agentls.trust_pending import pending_config, pending_deletion

    path = mcp_json(root)
    data = read_workspace_bytes(path)
    if data is None:
        gone = pending_deletion(store, path, "mcp")
        confirmed = None if gone is None else _confirmed_layer(path, gone)
        if gone is None or confirmed is None:
            return None, None, None
        return {"mcpServers": confirmed.get("mcpServers") or {}}, None, gone
    layer = parse_json_object(path, data)
    waiting = pending_config(store, path, "mcp", data)
    if waiting is None:
        return {"mcpServers": layer.get("mcpServers") or {}}, None, None
    confirmed = _confirmed_layer(path, waiting)
    kept = None if confirmed is None else {"mcpServers": confirmed.get("mcpServers") or {}}
    notice = f"agentls: ignored the MCP servers of {path}: {why_untrusted(path, _state(waiting), editor)}"
    return kept, notice, waiting
