"""ACP's question about a workspace config the user has not confirmed (agentls.trust_pending):
before a session's first turn, each .agentls/config.json or .mcp.json that is new or changed since
the user confirmed it is shown as a tool call of kind "edit" with its diff (the content confirmed
before, or none, to the file's content now) and asked with session/request_permission: "Apply" /
"Keep ignoring". Until "Apply" it does not apply; a client that cannot answer leaves it ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from acp.schema import (
    AllowedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from agentls.acp.tools import ToolContent, text_content
from agentls.config import Settings
from agentls.trust import TrustStoreError
from agentls.trust_pending import PendingConfig, confirm, keep_ignoring

log = logging.getLogger(__name__)

APPLY = "apply"
KEEP_IGNORING = "keep_ignoring"
OPTIONS = [
    PermissionOption(option_id=APPLY, name="Apply", kind="allow_once"),
    PermissionOption(option_id=KEEP_IGNORING, name="Keep ignoring", kind="reject_once"),
]


def _content(pending: PendingConfig) -> list[ToolContent]:
    content: list[ToolContent] = [
        FileEditToolCallContent(
            type="diff",
            path=str(pending.file),
            old_text=pending.old_text,
            new_text=pending.new_text,
        )
    ]
    enables = pending.enables()
    lines = ["It enables:", *(f"  {line}" for line in enables)] if enables else []
    lines.append(pending.until())
    content.append(text_content("\n".join(lines)))
    return content


async def ask_pending(
    client: Any,
    session_id: str,
    settings: Settings,
    asked: set[tuple[str, str]],
    send: Callable[[str, Any], Awaitable[None]],
) -> bool:
    """Ask in `session_id` about each workspace config not confirmed yet (once per content and
    connection, never about content the user chose to keep ignoring). True when one was applied:
    the caller loads the settings again."""
    applied = False
    for pending in settings.pending_configs:
        if pending.declined or pending.key in asked:
            continue
        asked.add(pending.key)
        call_id = f"agentls-config-{pending.sha256[:16]}"
        location = [ToolCallLocation(path=str(pending.file))]
        await send(
            session_id,
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=call_id,
                title=pending.title(),
                kind="edit",
                status="pending",
                locations=location,
                content=_content(pending),
            ),
        )
        try:
            response = await client.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id=call_id,
                    title=pending.title(),
                    kind="edit",
                    status="pending",
                    locations=location,
                    content=_content(pending),
                ),
                options=OPTIONS,
            )
            outcome = response.outcome
            apply = isinstance(outcome, AllowedOutcome) and outcome.option_id == APPLY
        except Exception as exc:  # the client could not ask: it stays ignored
            log.warning("session/request_permission for %s failed: %s", pending.file, exc)
            apply = None
        status: Literal["completed", "failed"] = "failed"
        try:
            if apply:
                if confirm(pending):
                    applied = True
                    status = "completed"
            elif apply is False:
                keep_ignoring(pending)
        except TrustStoreError as exc:
            log.warning("%s", exc)
        await send(
            session_id,
            ToolCallProgress(
                session_update="tool_call_update", tool_call_id=call_id, status=status
            ),
        )
    return applied
