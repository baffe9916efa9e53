"""The server's settings and lifecycle: initialize (the workspace root, initializationOptions,
the client's capabilities), initialized, workspace/didChangeConfiguration, the agent/workspaceTrust
notification, shutdown. Settings change without a restart; bad ones never refuse the connection:
they are reported, and the agent refuses to work until they are fixed. A workspace config file
new or changed since the user confirmed it is not applied; the editor is asked about it
(agent/confirmWorkspaceConfig, see ask_pending)."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from lsprotocol import types
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import to_fs_path

from agentls.config import Settings, load_settings
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.capabilities import read_client_caps
from agentls.lsp.folders import change_folders, folder_settings, hand_to_agent, initial_folders
from agentls.lsp.transport import invalid, parse
from agentls.protocol.config_trust import (
    ConfirmWorkspaceConfigParams,
    ConfirmWorkspaceConfigResult,
)
from agentls.protocol.models import AgentInitOptions, WorkspaceTrustParams
from agentls.trust import TrustStoreError
from agentls.trust_pending import PendingConfig, confirm, keep_ignoring

CONFIRM_WORKSPACE_CONFIG = "agent/confirmWorkspaceConfig"

log = logging.getLogger(__name__)


# ---- handlers ---------------------------------------------------------------------------


def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
    ls.root = workspace_root(params)
    ls.folders = initial_folders(params, ls.root)
    try:
        agent_options = agent_member(params.initialization_options)
        init = AgentInitOptions.model_validate(agent_options or {})
        overrides = init.model_dump(by_alias=True, exclude_none=True)
        overrides.pop("workspaceTrusted", None)
        ls.workspace_trusted = init.workspace_trusted is True
        ls.settings = load(ls, overrides)
        ls.init_overrides = overrides
        ls.config_error = None
    except Exception as exc:
        # Bad settings (initialization options, a config file) do not refuse the connection:
        # the answer to initialize never depends on them. The agent refuses to work until they
        # are fixed (AgentServer.agent), and the editor is told once initialized.
        detail = exc.message if isinstance(exc, JsonRpcException) else str(exc)
        ls.config_error = f"bad agent settings: {detail}"
        log.error("%s", ls.config_error)
    encoding = ls.workspace.position_encoding if ls.protocol._workspace is not None else None
    ls.client_caps = read_client_caps(params, encoding)


def initialized(ls: AgentServer, params: types.InitializedParams) -> None:
    ls.start_background_import()
    tell_untrusted(ls)
    ask_pending(ls)
    if ls.config_error is not None:
        ls.show_message(f"agentls: {ls.config_error}. The agent is off until they are fixed.")


def did_change_configuration(ls: AgentServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if not isinstance(settings, dict):
        return
    try:
        apply_configuration(ls, settings.get("agent"))
    except (ValidationError, JsonRpcInvalidParams, ValueError) as exc:
        ls.window_log_message(
            types.LogMessageParams(
                type=types.MessageType.Error, message=f"agentls: bad agent settings: {exc}"
            )
        )


def workspace_trust(ls: AgentServer, raw: Any) -> None:
    """agent/workspaceTrust: the editor granted (or withdrew) trust: the workspace config applies
    in full (or only tightens) from the next tool call on, without a restart."""
    try:
        params = parse(WorkspaceTrustParams, raw)
        reload_settings(ls, None, params.trusted)
    except (JsonRpcInvalidParams, ValidationError, ValueError) as exc:
        detail = exc.message if isinstance(exc, JsonRpcInvalidParams) else str(exc)
        log.warning("agent/workspaceTrust: %s", detail)
        ls.show_message(f"agentls: bad agent settings: {detail}")


def did_change_workspace_folders(
    ls: AgentServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    """The editor added or removed workspace folders: inside (or not) from the next tool call on,
    an added folder's config loaded (and asked about) as the others'."""
    change_folders(ls, params)
    try:
        reload_settings(ls, None, ls.workspace_trusted)
    except (ValidationError, JsonRpcInvalidParams, ValueError) as exc:
        detail = exc.message if isinstance(exc, JsonRpcInvalidParams) else str(exc)
        ls.config_error = f"bad agent settings: {detail}"
        ls.show_message(f"agentls: {ls.config_error}. The agent is off until they are fixed.")


async def shutdown(ls: AgentServer, params: Any) -> None:
    await ls.close()


# ---- the settings -----------------------------------------------------------------------


def workspace_root(params: types.InitializeParams) -> Path:
    """The first workspace folder, else rootUri, else rootPath, else the current directory."""
    root = Path(os.getcwd())
    root_uri = params.root_uri
    if params.workspace_folders:
        root_uri = params.workspace_folders[0].uri
    if root_uri:
        root = Path(to_fs_path(root_uri) or os.getcwd())
    elif params.root_path:
        root = Path(params.root_path)
    return Path(os.path.realpath(root))


def agent_member(options: Any) -> dict[str, Any] | None:
    """initializationOptions.agent (or a configuration's "agent" section), checked an object."""
    agent_options = options.get("agent") if isinstance(options, dict) else None
    if agent_options is not None and not isinstance(agent_options, dict):
        raise invalid("initializationOptions.agent: must be an object")
    return agent_options


def load(ls: AgentServer, overrides: dict[str, Any]) -> Settings:
    fingerprint = folders_fingerprint(ls)
    settings = load_settings(
        ls.root, overrides, workspace_trusted=ls.workspace_trusted, editor=True
    )
    ls.folder_settings = folder_settings(ls, overrides)  # each other folder's (lsp/folders.py)
    ls.overrides = overrides
    ls.config_fingerprint = fingerprint
    return settings


def workspace_fingerprint(root: Path) -> tuple[str | None, ...]:
    """The sha256 of each workspace config file (None: absent or unreadable)."""
    from agentls.config import read_workspace_bytes
    from agentls.trust import digest, mcp_json, workspace_config

    out: list[str | None] = []
    for file in (workspace_config(root), mcp_json(root)):
        try:
            data = read_workspace_bytes(file)
        except ValueError:
            data = None
        out.append(None if data is None else digest(data))
    return tuple(out)


def folders_fingerprint(ls: AgentServer) -> tuple[str | None, ...]:
    """workspace_fingerprint of every workspace folder."""
    return tuple(h for root in ls.folders.roots for h in workspace_fingerprint(root))


def recheck_workspace_config(ls: AgentServer) -> None:
    """A new session: when a workspace config file changed since the settings were loaded, they
    are loaded again, so the change is asked about (never applied unseen) without waiting for a
    configuration change."""
    if ls.config_error is not None or folders_fingerprint(ls) == ls.config_fingerprint:
        return
    try:
        reload_settings(ls, None, ls.workspace_trusted)
    except (ValidationError, JsonRpcInvalidParams, ValueError) as exc:
        log.warning("agentls: bad agent settings: %s", exc)


def apply_configuration(ls: AgentServer, agent_settings: Any) -> None:
    if agent_settings is None:
        return
    if not isinstance(agent_settings, dict):
        raise invalid("agent settings must be an object")
    options = AgentInitOptions.model_validate(agent_settings)
    changed = options.model_dump(by_alias=True, exclude_none=True)
    changed.pop("workspaceTrusted", None)
    trusted = ls.workspace_trusted
    if options.workspace_trusted is not None:
        trusted = options.workspace_trusted
    reload_settings(ls, {**ls.init_overrides, **changed}, trusted)


def reload_settings(ls: AgentServer, overrides: dict[str, Any] | None, trusted: bool) -> None:
    """Load the settings again (new overrides, a grant of workspace trust) and hand them to the
    agent: no restart. Raises on bad settings, leaving the previous ones in force."""
    previous = ls.workspace_trusted
    ls.workspace_trusted = trusted
    try:
        ls.settings = load(ls, ls.overrides if overrides is None else overrides)
    except Exception:
        ls.workspace_trusted = previous
        raise
    ls.config_error = None
    if ls.running_agent is not None:
        ls.running_agent.update_settings(ls.settings)
    hand_to_agent(ls)
    tell_untrusted(ls)
    ask_pending(ls)


def tell_untrusted(ls: AgentServer) -> None:
    """Once per server run and file state: which keys of an untrusted workspace config were
    ignored, and how to trust it (each workspace folder's)."""
    for settings in (ls.settings, *ls.folder_settings.values()):
        notice = settings.untrusted_notice
        if notice is None or notice in ls.notices_shown:
            continue
        ls.notices_shown.add(notice)
        log.warning("%s", notice)
        ls.show_message(notice, types.MessageType.Warning)


# ---- a workspace config the user has not confirmed ----------------------------------------


def ask_pending(ls: AgentServer) -> None:
    """In an editor-trusted workspace, ask the editor (agent/confirmWorkspaceConfig) about each
    workspace config file that is new or changed since the user confirmed it: once per content
    and server run, never about content the user chose to keep ignoring. Until "Apply" it is not
    applied (agentls.config.load_settings); without editor trust the notice says how to confirm."""
    if not ls.workspace_trusted:
        return
    every = (ls.settings, *ls.folder_settings.values())  # each workspace folder's files
    for pending in (p for settings in every for p in settings.pending_configs):
        if pending.declined or pending.key in ls.config_questions:
            continue
        ls.config_questions.add(pending.key)
        ls.spawn(ask_editor(ls, pending))


async def ask_editor(ls: AgentServer, pending: PendingConfig) -> None:
    params = ConfirmWorkspaceConfigParams(
        file=str(pending.file),
        kind=pending.kind,
        change=pending.change,
        title=pending.title(),
        enables=pending.enables(),
        diff=pending.diff(),
        sha256=pending.sha256,
    )
    try:
        raw = await asyncio.wrap_future(
            ls.protocol.send_request(
                CONFIRM_WORKSPACE_CONFIG, params.model_dump(by_alias=True, mode="json")
            )
        )
        answer = ConfirmWorkspaceConfigResult.model_validate(_plain(raw))
    except Exception as exc:  # no answer, an error, a malformed one: it stays ignored
        log.warning("%s: %s", CONFIRM_WORKSPACE_CONFIG, exc)
        return
    if not answer.apply:
        try:
            keep_ignoring(pending)
        except TrustStoreError as exc:
            ls.show_message(f"agentls: {exc}")
        return
    try:
        confirmed = confirm(pending)
    except TrustStoreError as exc:
        ls.show_message(f"agentls: {exc}")
        return
    if confirmed:
        ls.window_log_message(
            types.LogMessageParams(
                type=types.MessageType.Info,
                message=f"agentls: applied {pending.file} (this exact content)",
            )
        )
    else:
        ls.show_message(
            f"agentls: {pending.file} changed again before it was applied; not applied.",
            types.MessageType.Warning,
        )
    try:
        reload_settings(ls, None, ls.workspace_trusted)  # asks about the newer content, if any
    except (ValidationError, JsonRpcInvalidParams, ValueError) as exc:
        ls.show_message(f"agentls: bad agent settings: {exc}")


def _plain(raw: Any) -> Any:
    """A client's result as plain JSON values (pygls may hand back an object of attributes)."""
    if raw is None or isinstance(raw, (dict, list, str, int, float, bool)):
        return raw
    if hasattr(raw, "_asdict"):
        return {k: _plain(v) for k, v in raw._asdict().items()}
    if hasattr(raw, "__dict__"):
        return {k: _plain(v) for k, v in vars(raw).items()}
    return raw
