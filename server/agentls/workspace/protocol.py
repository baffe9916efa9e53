"""The Workspace seam between the tools and the front end's files, and what a change came to."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass
class EditOutcome:
    """What happened when the workspace applied a change to one file."""

    applied: bool
    reason: str | None = None  # why not, when applied is False
    # Notes for the model (e.g. "the buffer has unsaved changes: commands see the saved version").
    notes: list[str] = field(default_factory=list)
    # The verification summary to append to the tool result (agentls.verify): the new problems
    # the change introduced, or that there are none. None when nothing checked the file.
    diagnostics: str | None = None


class Workspace(Protocol):
    """Where files live. The CLI implements it with the disk (DiskWorkspace); the language server
    with editor buffers (LspWorkspace)."""

    root: Path

    async def read_text(self, path: Path) -> str:
        """Current text of a file (an open buffer's unsaved text wins). Raises FileNotFoundError,
        IsADirectoryError, or UnicodeDecodeError (binary)."""
        ...

    async def write_text(self, path: Path, new_text: str, old_text: str | None) -> EditOutcome:
        """Replace the file's whole text (create it when old_text is None). Not applied when the
        file is no longer old_text (see agentls.workspace.changed)."""
        ...

    async def delete(self, path: Path) -> EditOutcome:
        """Delete a file (revert of a file the agent created); applied when it does not exist."""
        ...
