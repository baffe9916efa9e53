"""Positions: LSP's (0-based line, UTF-16 character) against Python strings, file URIs, and
finding the exact place of a symbol the model names with an approximate 1-based line."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

# A line that declares the name (def, class, function, ...): preferred when no line is given.
_DECLARES = r"(?:def|class|function|fn|func|interface|type|struct|enum|trait|const|let|var|val)"


def path_to_uri(path: Path) -> str:
    return path.as_uri()


def uri_to_path(uri: str) -> Path | None:
    """The file a `file:` URI names; None for any other scheme."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def utf16_column(line: str, index: int) -> int:
    """The UTF-16 column of the character at `index` of `line`."""
    return utf16_length(line[:index])


def index_of_column(line: str, column: int) -> int:
    """The index in `line` of UTF-16 column `column` (clamped to the line)."""
    units = 0
    for i, char in enumerate(line):
        if units >= column:
            return i
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def line_starts(text: str) -> list[int]:
    """The offset at which each line starts (\\n, \\r\\n and \\r end a line, as in LSP)."""
    starts = [0]
    for match in re.finditer(r"\r\n|\r|\n", text):
        starts.append(match.end())
    return starts


def offset_at(text: str, starts: list[int], line: int, character: int) -> int:
    """The offset of an LSP position in `text` (clamped: past the end is the end)."""
    if line < 0:
        return 0
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content = text[start:end].rstrip("\r\n")
    return start + index_of_column(content, character)


@dataclass(frozen=True)
class SymbolPosition:
    """Where a named symbol is: LSP position (0-based line, UTF-16 character) and what was picked,
    in words for the model."""

    line: int
    character: int
    note: str


class SymbolNotFound(ValueError):
    """The name does not occur in the file (the message says so, for the model)."""


def find_symbol(text: str, symbol: str, line: int | None, rel: str) -> SymbolPosition:
    """The occurrence of `symbol` (a whole word) nearest to 1-based `line` in `text`; without a
    line, its first declaration (def, class, ...) or else its first occurrence. A dotted name
    (`Class.method`) is looked up by its last part."""
    name = symbol.strip()
    if "." in name and not re.fullmatch(r"[\w$]+", name):
        name = name.rsplit(".", 1)[-1]
    if not name:
        raise SymbolNotFound("symbol is empty: name the function, class or variable.")
    lines = text.splitlines()
    word = re.compile(r"(?<![\w$])" + re.escape(name) + r"(?![\w$])")
    hits = [(n, m.start()) for n, content in enumerate(lines) for m in word.finditer(content)]
    if not hits:
        loose = re.compile(re.escape(name), re.IGNORECASE)
        similar = sorted({m.group(0) for content in lines for m in loose.finditer(content)})
        hint = f" (it has {', '.join(similar[:3])} in another case)" if similar else ""
        raise SymbolNotFound(f"`{name}` does not occur in {rel} as a whole word{hint}.")
    if line is not None:
        target = line - 1
        n, index = min(hits, key=lambda hit: (abs(hit[0] - target), hit[0], hit[1]))
        where = "on that line" if n == target else f"the nearest to line {line}"
    else:
        declares = re.compile(_DECLARES + r"\s+" + re.escape(name) + r"(?![\w$])")
        declared = [hit for hit in hits if declares.search(lines[hit[0]])]
        n, index = declared[0] if declared else hits[0]
        where = "its declaration" if declared else "its first occurrence"
    count = f"{len(hits)} occurrences" if len(hits) > 1 else "the only occurrence"
    note = f"`{name}` at {rel}:{n + 1}:{index + 1} ({where}; {count} in the file)"
    return SymbolPosition(n, utf16_column(lines[n], index), note)
