"""Text changes as LSP edits: the smallest single TextEdit between two texts, in client units."""

from __future__ import annotations

from lsprotocol import types

from agentls.workspace.hunks import hunks, split_lines


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    # UTF-16, the LSP default: astral characters count twice.
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def position_at(text: str, offset: int, encoding: str = "utf-16") -> types.Position:
    """The LSP position of a code-point offset into text."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return types.Position(line=line, character=_units(text[line_start:offset], encoding))


def offset_at(text: str, position: types.Position, encoding: str = "utf-16") -> int:
    """The code-point offset of an LSP position (clamped to the text)."""
    start = 0
    for _ in range(position.line):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    units = 0
    index = start
    while index < end and units < position.character:
        units += _units(text[index], encoding)
        index += 1
    return index


def minimal_edit(old: str, new: str, encoding: str = "utf-16") -> types.TextEdit:
    """One TextEdit replacing only the region that differs (keeps cursors and undo tidy)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    start = position_at(old, prefix, encoding)
    end = position_at(old, len(old) - suffix, encoding)
    return types.TextEdit(
        range=types.Range(start=start, end=end), new_text=new[prefix : len(new) - suffix]
    )


def hunk_edits(old: str, new: str, encoding: str = "utf-16") -> list[types.TextEdit]:
    """One TextEdit per hunk (workspace/hunks.py), in order, each replacing whole lines: how a
    proposal is offered, so a client can take some of its hunks."""
    lines = split_lines(old)

    def line_start(index: int) -> types.Position:
        # A hunk starts and ends at a line start, or at the end of a last line without a break.
        if index == len(lines) and lines and not lines[-1].endswith("\n"):
            return types.Position(line=index - 1, character=_units(lines[-1], encoding))
        return types.Position(line=index, character=0)

    return [
        types.TextEdit(
            range=types.Range(start=line_start(hunk.old_start), end=line_start(hunk.old_end)),
            new_text="".join(hunk.new_lines),
        )
        for hunk in hunks(old, new)
    ]


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    """Apply non-overlapping edits (as an editor would), last first so offsets stay valid."""
    spans = sorted(
        (
            (
                offset_at(text, e.range.start, encoding),
                offset_at(text, e.range.end, encoding),
                e.new_text,
            )
            for e in edits
        ),
        key=lambda s: (s[0], s[1]),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text
