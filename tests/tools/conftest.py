"""A ToolContext for tool tests: real files under tmp_path, recorded permission queries."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agentls.permission.rules import PermissionRules
from agentls.tools.base import (
    PathAuthorization,
    PermissionDenied,
    PermissionQuery,
    ReadLedger,
    Tool,
    ToolError,
    ToolResult,
)
from agentls.tools.support.sandbox import SandboxPolicy
from agentls.verify.workspace import DiskWorkspace
from agentls.workspace.protocol import Workspace


class ToolTestContext(PathAuthorization):
    """Implements the ToolContext protocol for tests."""

    def __init__(self, root: Path, workspace: Workspace | None = None) -> None:
        self.root = root.resolve()
        self.workspace: Workspace = workspace or DiskWorkspace(self.root)
        self.ledger = ReadLedger()
        self.call_id = "call-1"
        self.session_id = "session-1"
        self.queries: list[PermissionQuery] = []
        self.deny_feedback: str | None = None  # set to deny every query with this feedback
        self.open_outside: list[Path] = []  # outside directories a "rule" opens
        self.progress_messages: list[str] = []
        # bash runs without the sandbox here (its own tests: tests/security/test_sandbox.py).
        self.sandbox = SandboxPolicy(mode="off")
        # The real default rules decide what searches may show (secrets are left out).
        self.rules = PermissionRules.from_config(None)

    def is_outside(self, path: Path) -> bool:
        return path != self.root and self.root not in path.parents

    def relative(self, path: Path) -> str:
        if self.is_outside(path):
            return str(path)
        return path.relative_to(self.root).as_posix() or "."

    def resolve_path(self, raw: str | None, *, tool: str) -> Path:
        if raw is None or raw.strip() in ("", "."):
            return self.root
        candidate = Path(os.path.expanduser(raw.strip()))
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = Path(os.path.realpath(candidate))
        if self.is_outside(resolved):
            for opened in self.open_outside:
                if resolved == opened or opened in resolved.parents:
                    return resolved
            raise ToolError(f"{raw} is outside the workspace ({self.root}).")
        return resolved

    async def authorize(self, query: PermissionQuery) -> None:
        self.queries.append(query)
        if self.deny_feedback is not None:
            raise PermissionDenied(
                f"The user rejected this {query.tool} call ({query.title}). Nothing was done.\n"
                f"Their feedback: {self.deny_feedback}"
            )

    def may_show(self, path: Path) -> bool:
        return (
            self.rules.evaluate(
                "read", self.relative(path), outside_workspace=self.is_outside(path)
            )
            == "allow"
        )

    def progress(self, message: str) -> None:
        self.progress_messages.append(message)


RunTool = Callable[..., Awaitable[ToolResult]]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def ctx(root: Path) -> ToolTestContext:
    return ToolTestContext(root)


@pytest.fixture
def run(ctx: ToolTestContext) -> RunTool:
    """await run(tool, **input): parse the raw input like the loop does, then run the tool."""

    async def _run(tool: Tool, **raw: Any) -> ToolResult:
        return await tool.run(tool.parse(raw), ctx)

    return _run


# A project on jedi-language-server, for the language tools' tests (tests/tools/language_support.py).
from tests.tools.language_support import lctx, lrun  # noqa: E402, F401
