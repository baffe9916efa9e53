"""A configured language server's diagnostics of the edited file itself, before and after an edit,
for the workspaces without an editor's diagnostics (the disk's under `agentls run`, an ACP
editor's, and the language server front end's when its editor pushes none): its names, types and
lint, which agentls' syntax check cannot see. before_after.py calls it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.verify.commands import relative_name
from agentls.verify.reach import can_pull, pull_if_answered, pulled_summary
from agentls.workspace.protocol import Languages

# Who answered, said with the result: a server of the `languageServers` setting.
ORIGIN = "language server, from languageServers"

Diagnostics = list[dict[str, Any]]


async def served_before(
    languages: Languages, path: Path, old_text: str | None
) -> Diagnostics | None:
    """The file's diagnostics before the edit (none for a file it creates); None when no
    language server answers them for this file."""
    if old_text is None:
        return [] if can_pull(languages, path) else None
    return await pull_if_answered(languages, path, path.as_uri())


async def served_after(
    languages: Languages,
    path: Path,
    root: Path,
    before: Diagnostics | None,
    summary: str | None,
    origin: str = ORIGIN,
) -> str | None:
    """The edit's summary with the language server's new problems first (when one answered);
    `origin` says whose servers answered."""
    if before is None:
        return summary
    label = relative_name(path, root)
    said = await pulled_summary(languages, path, path.as_uri(), before, label, origin)
    if not said:
        return summary
    return f"{said}\n{summary}" if summary else said
