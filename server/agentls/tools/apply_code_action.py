"""apply_code_action: one of the language servers' code actions at some lines of a file, named by
its title, applied as ONE proposed change like rename's: resolved first where the server fills in
its edit on request (`codeAction/resolve`); an action that only runs a command has the command
run where the edits it sends back (`workspace/applyEdit`) are captured, never applied
(language/commands.py: a command that would do anything else is refused and said). The edit is
asked about once (the combined diff) under the edit rules of every file it touches, and written
to all of them or none (Workspace.write_all), so the turn's revert takes it back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.language.edits import UnsupportedEdit, edits_by_file
from agentls.language.errors import LanguageUnavailable
from agentls.language.render import plural
from agentls.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolResult,
    expect_input,
)
from agentls.tools.support.code_actions import (
    ONLY_WHEN_ASKED,
    Actions,
    RangeInput,
    command_of,
    fetch_actions,
    find_action,
    is_bare_command,
    same_title,
)
from agentls.tools.support.lookup import ask
from agentls.tools.support.workspace_edits import (
    Wording,
    check_read_first,
    propose,
)

_FILE_OPS = "apply the action in the editor, or make that change yourself"


class ApplyCodeActionInput(RangeInput):
    title: str = Field(description="The action's title, as code_actions listed it.")


class ApplyCodeActionTool(Tool):
    name = "apply_code_action"
    description = (
        "Apply one of the language servers' code actions (as code_actions lists them: same path "
        "and lines, and the action's title). Its change, in every file it touches, is proposed "
        "for approval as one edit and applied at once. Read each file it changes first."
    )
    input_model = ApplyCodeActionInput
    # Offered only where a language server answers it (session/offer.py).
    language_method = "textDocument/codeAction"

    def title(self, raw: dict[str, object]) -> str:
        title = raw.get("title")
        return f"apply {title!s}" if isinstance(title, str) else self.name

    async def run(self, params: ToolInput, ctx: ToolContext) -> ToolResult:
        params = expect_input(params, ApplyCodeActionInput)
        check_read_first(ctx, self.name, params.path, "apply the action")
        actions = await fetch_actions(ctx, self.name, params, authorize=False)
        where = actions.where(params)
        action = await _titled(ctx, self.name, params, actions, where)
        name = action["title"]
        disabled = action.get("disabled")
        if isinstance(disabled, dict):
            raise ToolError(
                f"The action {name!r} is disabled: {disabled.get('reason', 'no reason given')}."
            )
        edits, notes = await self._edits(ctx, action, actions.path)
        wording = Wording(refused="Not applied", what=repr(name), again="apply it again")
        proposal = await propose(ctx, edits, wording)
        if not proposal.changes:
            return ToolResult(f"Nothing to change: {name!r} edits no text.", title=name)
        title = f"{name} ({plural(len(proposal.changes), 'file')})"
        written = await proposal.write(
            ctx, tool=self.name, params=params, subject=actions.rel, title=title
        )
        head = f"Applied {name!r}: {plural(len(written.changes), 'file')} changed."
        return ToolResult("\n".join([*written.report(ctx, head), *notes]), title=title)

    async def _edits(
        self, ctx: ToolContext, action: dict[str, Any], path: Path
    ) -> tuple[list[dict[Path, list[dict[str, Any]]]], list[str]]:
        """The action's edits (each a WorkspaceEdit's text edits by file, in the order they
        apply), and notes for the model."""
        name = action["title"]
        notes: list[str] = []
        if (
            not is_bare_command(action)
            and "edit" not in action
            and "codeAction/resolve" in ctx.workspace.languages.methods(path)
        ):
            resolved = await ask(ctx, "codeAction/resolve", action, path)
            if isinstance(resolved, dict):
                action = resolved
        command = command_of(action)
        if "edit" in action:
            found = [action["edit"]]
            if command is not None:
                notes.append(
                    f"Note: the action also names the command {command['command']}, which was "
                    "not run (only its edit was applied)."
                )
        elif command is not None:
            found = await _run_command(ctx, command, path, name)
        else:
            raise ToolError(
                f"The action {name!r} has neither an edit nor a command; nothing was changed."
            )
        try:
            return [edits_by_file(e, f"the action {name!r}", _FILE_OPS) for e in found], notes
        except UnsupportedEdit as exc:
            raise ToolError(f"Not applied: {exc}. Nothing was changed.") from None


async def _titled(
    ctx: ToolContext, tool: str, params: ApplyCodeActionInput, actions: Actions, where: str
) -> dict[str, Any]:
    """The action titled as the call says; looked for among the `source` and `refactor` actions
    too, which some servers give only when asked for by kind (code_actions' `only`)."""
    for kind in ONLY_WHEN_ASKED:
        if any(same_title(a["title"], params.title) for a in actions.items):
            break
        more = await fetch_actions(ctx, tool, params, kind, authorize=False)
        if any(same_title(a["title"], params.title) for a in more.items):
            actions = more
            break
    return find_action(actions, params.title, where)


async def _run_command(
    ctx: ToolContext, command: dict[str, Any], path: Path, name: str
) -> list[Any]:
    """The WorkspaceEdits the command sent back while it ran (captured, not applied)."""
    request: dict[str, Any] = {"command": command["command"]}
    if isinstance(command.get("arguments"), list):
        request["arguments"] = command["arguments"]
    try:
        answer = await ctx.workspace.languages.request("workspace/executeCommand", request, path)
    except LanguageUnavailable as exc:
        raise ToolError(
            f"The action {name!r} only runs the command {command['command']}, which was not "
            f"run: {exc}. Nothing was changed."
        ) from None
    edits = answer.get("edits") if isinstance(answer, dict) else None
    if not isinstance(edits, list) or not edits:
        raise ToolError(
            f"The action {name!r} ran the command {command['command']}, which sent back no edit; "
            "nothing was changed."
        )
    return edits
