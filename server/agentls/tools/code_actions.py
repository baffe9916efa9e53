"""code_actions: the language servers' code actions at some lines of a file (quick fixes for the
diagnostics there, refactorings, organize imports, fix all), numbered, with their kind and
whether each is preferred. Read-only: apply_code_action applies one."""

from __future__ import annotations

from pydantic import Field

from agentls.language.headless import loading_note
from agentls.language.render import plural
from agentls.tools.base import Tool, ToolContext, ToolInput, ToolResult, expect_input
from agentls.tools.support.code_actions import RangeInput, describe, fetch_actions


class CodeActionsInput(RangeInput):
    only: str | None = Field(
        default=None,
        description="Only actions of this kind or its sub-kinds: `quickfix`, `refactor`, "
        "`refactor.extract`, `refactor.inline`, `refactor.rewrite`, `source`, "
        "`source.organizeImports`, `source.fixAll`.",
    )


class CodeActionsTool(Tool):
    name = "code_actions"
    description = (
        "List the language servers' code actions at a line or range of lines of a file: quick "
        "fixes for the errors and warnings there, refactorings (extract, inline, rewrite), "
        "organize imports, fix all. Each is numbered, with its kind and whether it is the "
        "preferred fix. Apply one with apply_code_action (same path and lines, and its title): "
        "prefer that over editing by hand for what a language server already knows how to do."
    )
    input_model = CodeActionsInput
    read_only = True
    # Offered only where a language server answers it (session/offer.py).
    language_method = "textDocument/codeAction"

    def title(self, raw: dict[str, object]) -> str:
        path = raw.get("path")
        return f"code actions in {path}" if isinstance(path, str) else self.name

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, CodeActionsInput)
        only = params.only.strip() if params.only and params.only.strip() else None
        actions = await fetch_actions(ctx, self.name, params, only)
        where = actions.where(params)
        of_kind = f" of kind {only}" if only else ""
        loading = loading_note()
        said = f"\n({loading[0].upper()}{loading[1:]}.)" if loading else ""
        if not actions.items:
            return ToolResult(f"No code actions{of_kind} at {where}.{said}")
        lines = [f"{plural(len(actions.items), 'code action')}{of_kind} at {where}:"]
        lines.extend(describe(n, a) for n, a in enumerate(actions.items, 1))
        lines.append("Apply one with apply_code_action and its title.")
        return ToolResult("\n".join(lines) + said)
