"""A proposed change as the hunks a front end asks about one by one (`agentls run`'s "pick hunks",
ACP's one permission request per hunk), and the answer those choices make: the accepted texts
Agent.approve takes (`accepted`), the same path as the VS Code panel's partial accept.

The hunks are workspace/hunks.py's, the ones the editor's per-hunk TextEdits are built from; a new
file is one hunk (all of it, or nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.tools.base import PermissionQuery
from agentls.workspace.hunks import Hunk, apply, hunks


@dataclass(frozen=True)
class ProposedHunk:
    """One hunk of a proposal: the file it changes (`old_text` None: a new file) and the hunk."""

    path: Path
    old_text: str | None
    hunk: Hunk

    @property
    def where(self) -> str:
        """Its lines in the file as it is ("new file" for a file that does not exist yet)."""
        if self.old_text is None:
            return "new file"
        h = self.hunk
        if h.old_end == h.old_start:  # an insertion: after the line before it
            return f"after line {h.old_start}" if h.old_start else "at the start"
        if h.old_end - h.old_start == 1:
            return f"line {h.old_start + 1}"
        return f"lines {h.old_start + 1}-{h.old_end}"


def _files(query: PermissionQuery) -> list[tuple[Path, str | None, str]]:
    if query.changes:
        return [(c.path, c.old_text, c.new_text) for c in query.changes if not c.delete]
    if query.path is not None and query.new_text is not None:
        return [(query.path, query.old_text, query.new_text)]
    return []


def proposal_hunks(query: PermissionQuery) -> list[ProposedHunk]:
    """The hunks of the change a question proposes, file by file in order (none: not a change)."""
    out: list[ProposedHunk] = []
    for path, old, new in _files(query):
        out += [ProposedHunk(path, old, h) for h in hunks(old or "", new)]
    return out


def accepted_texts(query: PermissionQuery, kept: Iterable[int]) -> dict[Path, str] | None:
    """What keeping the hunks numbered `kept` (indexes into proposal_hunks) accepts: each file's
    text with only those hunks applied (a file none of whose hunks is kept is left out: it stays
    as it is). None when every hunk is kept (the proposal as it is: a plain accept); empty when
    none is (a reject)."""
    every = proposal_hunks(query)
    chosen = {i for i in kept if 0 <= i < len(every)}
    if len(chosen) == len(every):
        return None
    texts: dict[Path, str] = {}
    for path, old, _ in _files(query):
        mine = [h.hunk for i, h in enumerate(every) if h.path == path and i in chosen]
        if mine:
            texts[path] = apply(old or "", mine)
    return texts


def kept_of(query: PermissionQuery, accepted: dict[Path, str]) -> list[bool]:
    """For each hunk of proposal_hunks, whether the accepted texts keep it as proposed (its lines
    replaced by exactly its new lines). A hunk the user rewrote counts as not kept."""
    out: list[bool] = []
    for ph in proposal_hunks(query):
        text = accepted.get(ph.path)
        if text is None:
            out.append(False)
            continue
        taken = hunks(ph.old_text or "", text)
        out.append(any(_same(ph.hunk, t) for t in taken))
    return out


def _same(a: Hunk, b: Hunk) -> bool:
    return (a.old_start, a.old_end, a.new_lines) == (b.old_start, b.old_end, b.new_lines)


def kept_label(kept: Sequence[bool]) -> str:
    """ "1 of 2 hunks kept", as the VS Code panel's card says it."""
    return f"{sum(kept)} of {len(kept)} hunk{'s' if len(kept) != 1 else ''} kept"


def kept_hunks_of(query: PermissionQuery, accepted: dict[Path, str]) -> list[bool] | None:
    """What a partial accept kept of a proposal of two hunks or more (kept_of), stored with the
    call's result; None for a proposal of one hunk."""
    return kept_of(query, accepted) if len(proposal_hunks(query)) > 1 else None
