"""`agentls serve`: the agent protocol over LSP (stdio). This module only builds the server and
wires the features to it:

- settings.py: initialize, initialized, configuration changes, workspace trust, shutdown;
- sessions.py: agent/newSession, listSessions, getMessages, prompt, setMode, cancel, revert,
  unrevert;
- approvals.py: agent/approve, the agent.approve command, how a question is shown;
- editor.py: documents, code actions, agent.runOnSelection, agent/diagnostics, context;
- mcp_status.py: agent/mcpStatus (the MCP servers, their state and tools);
- commands.py: agent/listCommands (the /commands a prompt runs);
- skills.py: agent/listSkills (the skills the agent can load);
- models.py: agent/listModels, agent/setModel (the panel's model picker);
- credentials.py: agent/setApiKey (a provider's key from the editor, used at once);
- session_admin.py: agent/renameSession, deleteSession, forkSession, exportSession;
- review.py: agent/listReview, agent/review (review "after": keep or undo the agent's edits);
- background_review.py: agent/backgroundDiff, backgroundApply, backgroundRemove (a finished
  background session's hunks brought into the user's tree);
- transport.py: the hardened JSON-RPC under them all, and the stdio loop.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from agentls.lsp import (
    approvals,
    background_review,
    commands,
    credentials,
    editor,
    mcp_status,
    models,
    propose,
    review,
    session_admin,
    sessions,
    settings,
    skills,
)
from agentls.lsp.agent_server import AgentServer
from agentls.lsp.transport import answering_store_errors, run_stdio

log = logging.getLogger(__name__)

# Custom requests: their params arrive as plain JSON objects, validated by each handler; a store
# fault is answered as RequestFailed (answering_store_errors).
REQUESTS: dict[str, Callable[..., Any]] = {
    "agent/newSession": sessions.new_session,
    "agent/prompt": sessions.prompt,
    "agent/cancel": sessions.cancel,
    "agent/retry": sessions.retry,
    "agent/setMode": sessions.set_mode,
    "agent/listSessions": sessions.list_sessions,
    "agent/getMessages": sessions.get_messages,
    "agent/revert": sessions.revert,
    "agent/unrevert": sessions.unrevert,
    "agent/approve": approvals.approve,
    "agent/diagnostics": editor.diagnostics,
    "agent/mcpStatus": mcp_status.mcp_status,
    "agent/listCommands": commands.list_commands,
    "agent/listSkills": skills.list_skills,
    "agent/listModels": models.list_models,
    "agent/setModel": models.set_model,
    "agent/setApiKey": credentials.set_api_key,
    "agent/renameSession": session_admin.rename_session,
    "agent/deleteSession": session_admin.delete_session,
    "agent/forkSession": session_admin.fork_session,
    "agent/exportSession": session_admin.export_session,
    "agent/listReview": review.list_review,
    "agent/review": review.review,
    "agent/proposeEdit": propose.propose_edit,
    "agent/backgroundDiff": background_review.background_diff,
    "agent/backgroundApply": background_review.background_apply,
    "agent/backgroundRemove": background_review.background_remove,
}
COMMANDS: dict[str, Callable[..., Any]] = {
    "agent.approve": approvals.approve_command,
    "agent.runOnSelection": editor.run_on_selection,
}
# LSP methods (and agent/workspaceTrust, a notification).
FEATURES: dict[str, Callable[..., Any]] = {
    types.INITIALIZE: settings.initialize,
    types.INITIALIZED: settings.initialized,
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: settings.did_change_configuration,
    types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: settings.did_change_workspace_folders,
    types.SHUTDOWN: settings.shutdown,
    "agent/workspaceTrust": settings.workspace_trust,
    types.TEXT_DOCUMENT_DID_OPEN: editor.did_open,
    types.TEXT_DOCUMENT_DID_CHANGE: editor.did_change,
    types.TEXT_DOCUMENT_DID_SAVE: editor.did_save,
    types.TEXT_DOCUMENT_DID_CLOSE: editor.did_close,
}


def build_server() -> AgentServer:
    server = AgentServer()
    server.presenter = approvals.presenter_for(server)
    for method, handler in FEATURES.items():
        server.feature(method)(handler)
    for method, handler in REQUESTS.items():
        server.feature(method)(answering_store_errors(handler))
    for name, handler in COMMANDS.items():
        server.command(name)(answering_store_errors(handler))
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=editor.CODE_ACTION_KINDS),
    )(editor.code_action)
    return server


def serve() -> int:
    """Run on stdin/stdout until `exit` or end of input. Either way, running turns are cancelled
    and persisted before the process ends (a client that disconnects mid-turn loses nothing)."""
    logging.basicConfig(level=os.environ.get("AGENTLS_LOG", "WARNING"), stream=sys.stderr)
    server = build_server()
    started = time.monotonic()
    log.info("agentls serve starting (pid %d)", os.getpid())
    code = run_stdio(server, server.close)
    log.info("agentls serve stopped after %.1f s", time.monotonic() - started)
    return code


__all__ = ["AgentServer", "build_server", "serve"]
