"""Language answers as compact text for the model: hits grouped by file with one line of context
each and a cap ("N more"), symbols one a line, hover contents as plain text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_HITS = 60
MAX_SYMBOLS = 60
MAX_CONTEXT_CHARS = 160
MAX_HOVER_CHARS = 4000

SYMBOL_KINDS = {
    1: "file",
    2: "module",
    3: "namespace",
    4: "package",
    5: "class",
    6: "method",
    7: "property",
    8: "field",
    9: "constructor",
    10: "enum",
    11: "interface",
    12: "function",
    13: "variable",
    14: "constant",
    15: "string",
    16: "number",
    17: "boolean",
    18: "array",
    19: "object",
    20: "key",
    21: "null",
    22: "enum member",
    23: "struct",
    24: "event",
    25: "operator",
    26: "type parameter",
}


@dataclass(frozen=True)
class Hit:
    """One place in a file: its path as shown to the model, 0-based line, the line's text, and
    an optional label (the caller's name, for callers)."""

    rel: str
    line: int
    text: str | None
    label: str | None = None


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: int
    container: str | None
    rel: str
    line: int  # 0-based


def kind_name(kind: Any) -> str:
    return SYMBOL_KINDS.get(kind, "symbol") if isinstance(kind, int) else "symbol"


def _context(text: str | None) -> str:
    if text is None:
        return ""
    line = text.strip()
    if len(line) > MAX_CONTEXT_CHARS:
        line = line[:MAX_CONTEXT_CHARS] + "…"
    return line


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def render_hits(
    hits: list[Hit], cap: int = MAX_HITS, narrow: str = "narrow the question to see them"
) -> str:
    """Hits grouped by file (files in order of their first hit, lines in order), each hit one
    line `  12: the line's text`; past `cap` hits, how many more there are and in how many files."""
    seen: set[tuple[str, int, str | None]] = set()
    unique: list[Hit] = []
    for hit in hits:
        key = (hit.rel, hit.line, hit.label)
        if key not in seen:
            seen.add(key)
            unique.append(hit)
    groups: dict[str, list[Hit]] = {}
    for hit in unique:
        groups.setdefault(hit.rel, []).append(hit)
    lines: list[str] = []
    shown = 0
    for rel, group in groups.items():
        if shown >= cap:
            break
        group.sort(key=lambda h: h.line)
        lines.append(f"{rel} ({len(group)})")
        for hit in group:
            if shown >= cap:
                break
            label = f"[{hit.label}] " if hit.label else ""
            lines.append(f"  {hit.line + 1}: {label}{_context(hit.text)}".rstrip())
            shown += 1
    more = len(unique) - shown
    if more > 0:
        files = len({h.rel for h in unique[shown:]} - {h.rel for h in unique[:shown]})
        extra = f" (in {plural(files, 'more file')})" if files else ""
        lines.append(f"... {more} more{extra}; {narrow}.")
    return "\n".join(lines)


def render_symbols(symbols: list[Symbol], cap: int = MAX_SYMBOLS) -> str:
    """One symbol a line: `function greet (in pkg.a) pkg/a.py:3`, at most `cap`."""
    lines = []
    for symbol in symbols[:cap]:
        container = f" (in {symbol.container})" if symbol.container else ""
        lines.append(
            f"{kind_name(symbol.kind)} {symbol.name}{container} {symbol.rel}:{symbol.line + 1}"
        )
    if len(symbols) > cap:
        lines.append(f"... {len(symbols) - cap} more; give a more specific query.")
    return "\n".join(lines)


def hover_text(result: Any) -> str:
    """A Hover's contents as plain text (MarkupContent, MarkedString or a list of them)."""
    if not isinstance(result, dict):
        return ""
    parts: list[str] = []

    def add(item: Any) -> None:
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict) and isinstance(item.get("value"), str):
            language = item.get("language")
            value = item["value"]
            parts.append(f"```{language}\n{value}\n```" if language else value)
        elif isinstance(item, list):
            for sub in item:
                add(sub)

    add(result.get("contents"))
    text = "\n".join(p.strip() for p in parts if p.strip())
    if len(text) > MAX_HOVER_CHARS:
        text = text[:MAX_HOVER_CHARS] + "\n… (cut)"
    return text
