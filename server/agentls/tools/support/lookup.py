"""What the language tools share: the symbol a call names found in its file, a request to the
workspace's language servers with its failure in words for the model, and the files an answer
names filtered by the read rules (a secret or denied file's hits are left out, and counted)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.language.errors import LanguageUnavailable
from agentls.language.headless import loading_note
from agentls.language.positions import SymbolNotFound, SymbolPosition, find_symbol, uri_to_path
from agentls.language.render import Hit, plural, render_hits
from agentls.tools.base import Tool, ToolContext, ToolError, ToolInput
from agentls.tools.support.glob_patterns import glob_matcher

FALLBACK = " Use grep and read instead for this one."


class SymbolInput(ToolInput):
    path: str = Field(description="The file the symbol is in (or used in).")
    symbol: str = Field(description="The symbol's name as written in the file (e.g. `parse_args`).")
    line: int | None = Field(
        default=None,
        ge=1,
        description="About where it is (1-based line); the nearest occurrence is used.",
    )


class PlacesInput(SymbolInput):
    """references and callers: a symbol, and which files' places to list."""

    include: str | None = Field(
        default=None,
        description="Only places in files matching this glob, relative to the workspace "
        "(`src/**`, `*.py`, `tests/**/test_*.py`, or one file's path). Use it when the answer "
        "lists more places than it shows.",
    )


# How the truncation note of references and callers says to narrow them.
NARROW = 'narrow it with include (a glob of files, e.g. "src/**" or a file from the list above)'
# At most this many files listed with their counts before the places.
MAX_FILES_LISTED = 300


def only_included(
    hits: list[Hit], include: str | None, root: Path | None = None
) -> tuple[list[Hit], int]:
    """The hits in files matching the `include` glob (relative paths; a file outside the
    workspace never matches; a glob written from the workspace root's absolute path is read
    relative to it), and how many were left out."""
    if include is None or not include.strip():
        return hits, 0
    include = include.strip()
    if root is not None and include.startswith(f"{root}{os.sep}"):
        include = include[len(str(root)) + 1 :]
    matcher = glob_matcher(include)
    kept = [h for h in hits if not os.path.isabs(h.rel) and matcher.match(h.rel)]
    return kept, len(hits) - len(kept)


def file_counts(hits: list[Hit]) -> str:
    """Every file of the hits with its count of places (most first), one a line: listed before
    the places, so a long answer can be narrowed to the files that matter."""
    places: dict[str, set[int]] = {}
    for hit in hits:
        places.setdefault(hit.rel, set()).add(hit.line)
    ranked = sorted(places.items(), key=lambda item: (-len(item[1]), item[0]))
    lines = [f"  {rel}: {len(lines)}" for rel, lines in ranked[:MAX_FILES_LISTED]]
    if len(ranked) > MAX_FILES_LISTED:
        lines.append(f"  ... and {plural(len(ranked) - MAX_FILES_LISTED, 'more file')}")
    return "Files:\n" + "\n".join(lines) + "\n"


# A line that only imports names (Python, JavaScript/TypeScript, Rust, Go): a reference on it
# is no call.
_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+import\b|import\b|export\s.*\bfrom\s|use\s|#include\b)")
_OPEN_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+import\s*\(|import\s*\(|import\s*\{|export\s*\{)")


def is_import(lines: list[str] | None, line: int) -> bool:
    """Whether `line` (0-based) of a file is an import: an import line, or a name inside an
    import's parentheses or braces spread over several lines."""
    if lines is None or not 0 <= line < len(lines):
        return False
    if _IMPORT.match(lines[line]):
        return True
    for back in range(line - 1, max(-1, line - 200), -1):
        text = lines[back]
        if any(close in text for close in (")", "}")):
            return False
        if _OPEN_IMPORT.match(text):
            return True
    return False


@dataclass
class Located:
    path: Path
    rel: str
    text: str
    position: SymbolPosition

    def params(self) -> dict[str, Any]:
        """TextDocumentPositionParams of the symbol."""
        return {
            "textDocument": {"uri": self.path.as_uri()},
            "position": {"line": self.position.line, "character": self.position.character},
        }


async def read_source(ctx: ToolContext, path: Path, rel: str) -> str:
    try:
        return await ctx.workspace.read_text(path)
    except FileNotFoundError:
        raise ToolError(f"File not found: {rel}.") from None
    except IsADirectoryError:
        raise ToolError(f"{rel} is a directory; name a file.") from None
    except UnicodeDecodeError:
        raise ToolError(f"{rel} is not a text file.") from None


async def locate(
    ctx: ToolContext, tool: str, params: SymbolInput, *, verb: str, authorize: bool = True
) -> Located:
    """The call's file (allowed as a read of it, unless `authorize` is False: the caller decides)
    and the exact position of the symbol it names."""
    path = ctx.resolve_path(params.path, tool=tool)
    rel = ctx.relative(path)
    if authorize:
        await ctx.authorize_path(tool, path, f"{verb} {params.symbol} in {rel}", params)
    text = await read_source(ctx, path, rel)
    try:
        position = find_symbol(text, params.symbol, params.line, rel)
    except SymbolNotFound as exc:
        raise ToolError(f"Symbol not found: {exc}") from None
    return Located(path, rel, text, position)


async def ask(ctx: ToolContext, method: str, params: dict[str, Any], path: Path | None) -> Any:
    """The language server's answer; a ToolError saying why there is none."""
    try:
        return await ctx.workspace.languages.request(method, params, path)
    except LanguageUnavailable as exc:
        raise ToolError(f"{exc}{FALLBACK}") from None


async def ask_if_offered(
    ctx: ToolContext, method: str, params: dict[str, Any], path: Path
) -> tuple[bool, Any]:
    """(True, the answer) when a server offers `method` for the file; (False, None) when none
    does (known for sure only once a server runs: it is asked, and its refusal counts)."""
    languages = ctx.workspace.languages
    if method not in languages.methods(path):
        return False, None
    try:
        return True, await languages.request(method, params, path)
    except LanguageUnavailable as exc:
        if method not in languages.methods(path):
            return False, None
        raise ToolError(f"{exc}{FALLBACK}") from None


def location_of(item: Any) -> tuple[Path, int] | None:
    """The file and 0-based line of a Location, LocationLink, or anything with `uri` + `range`."""
    if not isinstance(item, dict):
        return None
    uri = item.get("targetUri", item.get("uri"))
    rng = item.get("targetSelectionRange") or item.get("range")
    if not isinstance(uri, str):
        return None
    path = uri_to_path(uri)
    if path is None:
        return None
    line = 0
    if isinstance(rng, dict) and isinstance(rng.get("start"), dict):
        value = rng["start"].get("line")
        line = value if isinstance(value, int) else 0
    return Path(os.path.realpath(path)), line


def as_list(result: Any) -> list[Any]:
    if result is None:
        return []
    return result if isinstance(result, list) else [result]


class Shown:
    """The files of an answer that the read rules let the model see, each read once for context;
    how many places were left out."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self._lines: dict[Path, list[str] | None] = {}
        self._allowed: dict[Path, bool] = {}
        self.hidden = 0

    def relative(self, path: Path) -> str:
        return self._ctx.relative(path)

    def allowed(self, path: Path) -> bool:
        if path not in self._allowed:
            self._allowed[path] = self._ctx.may_show(path)
        ok = self._allowed[path]
        if not ok:
            self.hidden += 1
        return ok

    async def lines(self, path: Path) -> list[str] | None:
        """The file's lines (read once), None when it cannot be read."""
        if path not in self._lines:
            try:
                self._lines[path] = (await self._ctx.workspace.read_text(path)).splitlines()
            except (OSError, UnicodeDecodeError):
                self._lines[path] = None
        return self._lines[path]

    async def line(self, path: Path, line: int) -> str | None:
        lines = await self.lines(path)
        return lines[line] if lines is not None and 0 <= line < len(lines) else None

    async def hit(self, path: Path, line: int, label: str | None = None) -> Hit | None:
        if not self.allowed(path):
            return None
        return Hit(self._ctx.relative(path), line, await self.line(path, line), label)

    def note(self) -> str:
        loading = loading_note()  # the answer came before its server was ready
        said = f"\n({loading[0].upper()}{loading[1:]}.)" if loading else ""
        if not self.hidden:
            return said
        return said + (
            f"\n({plural(self.hidden, 'place')} in secret files, files a rule denies or files "
            "outside the workspace left out.)"
        )


async def hits_of(shown: Shown, items: list[Any]) -> list[Hit]:
    hits = []
    for item in items:
        where = location_of(item)
        if where is not None:
            hit = await shown.hit(*where)
            if hit is not None:
                hits.append(hit)
    return hits


MODULE_LEVEL = "module level"
# What the language tools' descriptions say to prefer them over grep.
INSTEAD = (
    " Prefer it over grep for code: it follows the language's own scoping and imports, so it "
    "skips comments, strings and namesakes."
)


class AtSymbol(Tool):
    """A language tool that asks one method about the symbol at {path, symbol, line?}."""

    input_model = SymbolInput
    read_only = True
    verb = ""

    def title(self, raw: dict[str, Any]) -> str:
        symbol = raw.get("symbol")
        return f"{self.name} {symbol}" if isinstance(symbol, str) else self.name


def places_text(head: str, hits: list[Hit], include: str | None, left_out: int) -> str:
    """references' and callers' answer: the head, every file with its count, the places (up to
    the cap, then how to narrow them)."""
    where = f" matching {include!r}" if include else ""
    outside = f" ({left_out} more in other files)" if left_out else ""
    files = len({h.rel for h in hits})
    counts = file_counts(hits) if files > 1 else ""
    return (
        f"{head} in {plural(files, 'file')}{where}{outside}:\n"
        f"{counts}{render_hits(hits, narrow=NARROW)}"
    )
