"""The server's question about a workspace config the user has not confirmed (agentls.trust_pending)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentls.protocol.base import Params, Result


class ConfirmWorkspaceConfigParams(Params):
    """Server -> client request `agent/confirmWorkspaceConfig`: a workspace config file
    (.agentls/config.json, .mcp.json, or a .claude/settings*.json holding hooks) is new or changed since the user last confirmed it, so it
    is not applied (the content confirmed before applies, or none). Sent in an editor-trusted
    workspace once per file content and server run, when the settings are loaded (start, a
    configuration change, a grant of trust), never for content the user chose to keep ignoring.
    The client shows `title`, `enables` and `diff` and asks "Apply" / "Keep ignoring"."""

    file: str  # the file's absolute path
    # .agentls/config.json, an MCP servers file, or Claude Code's .claude/settings*.json (hooks)
    kind: Literal["config", "mcp", "hooks"]
    # never confirmed; differs from what was confirmed; deleted while a confirmed content is kept
    # (that content applies until "Apply" accepts the deletion)
    change: Literal["new", "changed", "deleted"]
    title: str  # "Apply the changed agentls config /ws/.agentls/config.json?"
    # What applying it would enable, one line each ("allow: *", "MCP server x: cmd args").
    enables: list[str]
    # A unified diff from the confirmed content (or /dev/null) to the file's content now (or
    # /dev/null).
    diff: str
    # Of the content shown ("deleted" for a deletion): "Apply" confirms this content only; a
    # file changed again meanwhile is asked about again.
    sha256: str


class ConfirmWorkspaceConfigResult(Result):
    """`apply`: true records the content as confirmed and the settings are loaded again at once;
    false keeps ignoring it (not asked again; `agentls trust DIR` confirms it later). An error
    or no answer leaves it ignored."""

    apply: bool = Field(strict=True)
