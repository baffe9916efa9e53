"""What the client can do, read once from its `initialize` params: the LSP capabilities the
server's behaviour depends on, and the agent's own (capabilities.experimental.agent)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from agentls.protocol.models import LANGUAGE_METHODS, ClientAgentCapabilities


@dataclass
class ClientCaps:
    apply_edit: bool = False
    document_changes: bool = False
    create_files: bool = False
    delete_files: bool = False
    # workspace.workspaceEdit.changeAnnotationSupport: the agent's edits say who made them.
    change_annotations: bool = False
    work_done_progress: bool = False
    show_message_request: bool = False
    # The units of positions: "utf-16" (the LSP default), "utf-8" or "utf-32".
    position_encoding: str = "utf-16"
    # capabilities.experimental.agent: approvals panel, savesEdits, diagnosticsPush,
    # languageRequests.
    agent: ClientAgentCapabilities = field(default_factory=ClientAgentCapabilities)

    @property
    def language_requests(self) -> frozenset[str]:
        """The methods the client answers in agent/languageRequest (unknown names dropped)."""
        return frozenset(self.agent.language_requests) & LANGUAGE_METHODS


def read_client_caps(params: types.InitializeParams, position_encoding: Any) -> ClientCaps:
    """The client's capabilities, with the position encoding pygls settled on (None: utf-16).
    Raises pydantic's ValidationError on a bad experimental.agent."""
    caps = params.capabilities
    workspace = caps.workspace
    edit_caps = workspace.workspace_edit if workspace else None
    resource_ops = (
        [
            str(op.value if hasattr(op, "value") else op)
            for op in (edit_caps.resource_operations or [])
        ]
        if edit_caps
        else []
    )
    window = caps.window
    experimental = caps.experimental if isinstance(caps.experimental, dict) else {}
    agent_caps = experimental.get("agent") if isinstance(experimental, dict) else None
    return ClientCaps(
        apply_edit=bool(workspace and workspace.apply_edit),
        document_changes=bool(edit_caps and edit_caps.document_changes),
        create_files="create" in resource_ops,
        delete_files="delete" in resource_ops,
        change_annotations=bool(edit_caps and edit_caps.change_annotation_support is not None),
        work_done_progress=bool(window and window.work_done_progress),
        show_message_request=True,
        position_encoding=str(getattr(position_encoding, "value", position_encoding) or "utf-16"),
        agent=ClientAgentCapabilities.model_validate(
            agent_caps if isinstance(agent_caps, dict) else {}
        ),
    )
