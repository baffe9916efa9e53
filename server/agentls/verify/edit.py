"""The Verifier a workspace calls around a write: agentls' own checks before and after, then the
trusted verifyCommands; the summary of what the edit introduced goes into the tool result."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentls.config import Settings
from agentls.verify.checks import has_own_checks, own_checks
from agentls.verify.commands import matching_commands, relative_name, run_verify_commands
from agentls.verify.diagnostics import describe, fixed_problems, new_problems

# What agentls' own checks are, said with every result they give: a syntax check is not a
# verification, and the model is told so (it runs the project's tests for that).
ORIGIN = "agentls syntax check only: not names, types or tests"
NONE_FOUND = "no syntax errors"
# Texts longer than this are checked in a thread, off the event loop.
INLINE_CHECK_CHARS = 100_000

Diagnostics = list[dict[str, Any]]


async def checked(path: Path, text: str | None) -> Diagnostics:
    """own_checks of a text (none for a file that did not exist), a long one in a thread."""
    if text is None or not has_own_checks(path):
        return []
    if len(text) > INLINE_CHECK_CHARS:
        return await asyncio.to_thread(own_checks, path, text)
    return own_checks(path, text)


class Verifier:
    """Verifies the edits of one workspace: own checks of the text before and after, and the
    verifyCommands of the settings in force (a getter: the settings may change meanwhile)."""

    def __init__(self, root: Path, settings: Callable[[], Settings] | None = None) -> None:
        self.root = root
        self._settings = settings

    def settings(self) -> Settings | None:
        return self._settings() if self._settings is not None else None

    @property
    def wait_s(self) -> float:
        """How long to wait for an editor's diagnostics after an edit (settings verifyWaitS)."""
        settings = self.settings()
        return settings.verify_wait_s if settings is not None else Settings().verify_wait_s

    def commands(self) -> dict[str, str] | None:
        settings = self.settings()
        return settings.verify_commands if settings is not None else None

    def applies_to(self, path: Path) -> bool:
        """Whether anything checks this path: an own check, or a verifyCommand that matches."""
        return has_own_checks(path) or bool(matching_commands(path, self.root, self.commands()))

    async def before(self, path: Path, old_text: str | None) -> Diagnostics:
        """The problems the own checks find in the text an edit starts from."""
        return await checked(path, old_text)

    async def after(
        self,
        path: Path,
        new_text: str,
        before: Diagnostics,
        publish: Callable[[Diagnostics], None] | None = None,
    ) -> str:
        """The summary of an applied edit: the own checks' new (and fixed) problems, then the
        output of the verifyCommands that match. `publish` receives the own checks' diagnostics
        of the new text (an editor shows them)."""
        after = await checked(path, new_text)
        if publish is not None:
            publish(after)
        label = relative_name(path, self.root)
        summary = describe(
            label, new_problems(before, after), ORIGIN, fixed_problems(before, after), NONE_FOUND
        )
        extra = await run_verify_commands(path, self.root, self.commands())
        return summary + ("\n" + extra if extra else "")
