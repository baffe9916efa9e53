"""The edited file's own problems before and after an edit, for every front end alike: the
editor's pushed diagnostics where it pushes them (agent/diagnostics: the board, waited for until
the push that answers the edit has settled); otherwise agentls' own checks and the verifyCommands
(edit.py), with a language server's pulled diagnostics of the file first where one answers them
(the editor's, or those of `languageServers`: served.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.verify.board import UNHEARD_TYPE_WAIT_S, DiagnosticsBoard
from agentls.verify.commands import relative_name
from agentls.verify.diagnostics import describe, fixed_problems, new_problems
from agentls.verify.edit import Verifier
from agentls.verify.served import ORIGIN as SERVED_ORIGIN
from agentls.verify.served import served_after, served_before
from agentls.workspace.protocol import EditorDiagnostics, Languages

log = logging.getLogger(__name__)

Diagnostics = list[dict[str, Any]]
# Who answered a pull where an editor is attached (its servers first, see lsp/language.py).
EDITOR_PULLED = "editor, pulled"


@dataclass
class Before:
    """The problems an edited file had before the edit. `pushed`: the editor's latest push (`seq`
    numbers it on the board), `unheard` when the editor has pushed nothing for this file type yet
    (then agentls' own checks too, and only a short wait for the editor's answer). Else `own`
    checks and `served`, a language server's pulled diagnostics (None: none answers them)."""

    by_push: bool = False
    seq: int = 0
    pushed: Diagnostics = field(default_factory=list)
    unheard: bool = False
    own: Diagnostics = field(default_factory=list)
    served: Diagnostics | None = None


class FileChecks:
    """Before and after of one edited file. `languages` is a getter (a front end may set its
    language servers after it is built); `editor` the editor's diagnostics source, if any."""

    def __init__(
        self,
        root: Path,
        verifier: Verifier,
        languages: Callable[[], Languages],
        editor: EditorDiagnostics | None,
        board: DiagnosticsBoard,
    ) -> None:
        self.root = root
        self.verifier = verifier
        self.languages = languages
        self.editor = editor
        self.board = board

    async def before(self, path: Path, old_text: str | None) -> Before:
        if self.editor is None or not self.editor.pushes():
            own = await self.verifier.before(path, old_text)
            served = await served_before(self.languages(), path, old_text)
            return Before(own=own, served=served)
        uri = path.as_uri()
        pushed = self.board.current(uri)
        before = Before(
            by_push=True,
            seq=pushed.seq if pushed else 0,
            pushed=pushed.diagnostics if pushed else [],
        )
        if not self.board.heard_from(uri, self.editor.language_id(path)):
            before.unheard = True
            before.own = await self.verifier.before(path, old_text)
        return before

    async def after(
        self, path: Path, new_text: str, before: Before, version: int | None
    ) -> str | None:
        """The summary for the tool result (None: nothing checks this file)."""
        if before.by_push:
            return await self._pushed_after(path, new_text, before, version)
        summary = None
        if self.verifier.applies_to(path):
            editor = self.editor
            publish = (lambda after: editor.publish(path, after)) if editor is not None else None
            summary = await self.verifier.after(path, new_text, before.own, publish)
        origin = EDITOR_PULLED if self.editor is not None else SERVED_ORIGIN
        return await served_after(self.languages(), path, self.root, before.served, summary, origin)

    async def _pushed_after(
        self, path: Path, new_text: str, before: Before, version: int | None
    ) -> str:
        label = relative_name(path, self.root)
        wait_s = self.verifier.wait_s
        if before.unheard:
            wait_s = min(wait_s, UNHEARD_TYPE_WAIT_S)
        pushed = await self.board.wait_settled(path.as_uri(), before.seq, version, wait_s)
        if pushed is not None:
            return describe(
                label,
                new_problems(before.pushed, pushed.diagnostics),
                "editor",
                fixed_problems(before.pushed, pushed.diagnostics),
            )
        if not before.unheard:
            return (
                f"Diagnostics (editor): none arrived for {label} within {wait_s:.1f} s of the edit."
            )
        # No language server in the editor checks this file type: agentls' own checks.
        log.debug("no diagnostics ever pushed for the type of %s: own checks", path)
        summary = (
            f"Diagnostics (editor): none for {label}; the editor has reported none for its "
            "file type in this session."
        )
        if self.verifier.applies_to(path):
            summary += "\n" + await self.verifier.after(path, new_text, before.own)
        return summary
