"""An edit's reach: the other files that use a definition the edit changed, and the new errors in
them.

Before the edit is applied (the language server still has the old text):
1. the lines the edit changes (old against new text);
2. the definitions there: the document's symbols (textDocument/documentSymbol) whose range the
   change touches, the innermost ones and none local to a function; without a language server
   answering documentSymbol, for Python, the module's functions, classes and methods whose
   signature the edit changed or that it removed (pycalls.py);
3. their references (textDocument/references at the definition's name) in other files;
4. each such file's diagnostics: the latest the editor pushed for it (the board), else pulled
   (textDocument/diagnostic) where something answers that for the file and, for Python, agentls'
   own check of the uses (pycalls.py), together; a file none of these covers is not compared.
After the edit the same once more, and the NEW errors are reported, grouped by file and capped.
When no language server answers references for the edited file, none of this runs."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote, urlparse

from agentls.verify.board import DiagnosticsBoard
from agentls.verify.commands import relative_name
from agentls.verify.diagnostics import (
    SEVERITY_NAMES,
    describe,
    diag_key,
    fixed_problems,
    new_problems,
)
from agentls.verify.pycalls import PyDef, module_names, python_definitions, use_problems
from agentls.workspace.protocol import Languages, LanguageUnavailable, Reach

log = logging.getLogger(__name__)

SYMBOLS = "textDocument/documentSymbol"
REFERENCES = "textDocument/references"
PULL = "textDocument/diagnostic"

# Definitions followed per edit, files compared, files and errors per file reported.
MAX_DEFINITIONS = 5
MAX_FILES = 20
MAX_FILES_REPORTED = 5
MAX_PER_FILE = 5
# After the edited file's own diagnostics are in, how long other files' pushes are waited for (at
# most verifyWaitS): a language server publishes a dependent file's diagnostics right after the
# edited one's, and an editor pushes nothing for a file whose diagnostics did not change.
PUSH_WAIT_S = 0.5
# How long the language server may take, before the edit, to say what it changes and who uses
# it (a server that starts on this first request included); after that the edit goes on alone.
BEFORE_TIMEOUT_S = 5.0
# How long, after the edit, another file's diagnostics may take (a pull, or a headless server's
# push for a file it had to open); a file whose take longer is left out.
AFTER_TIMEOUT_S = 2.0

# LSP SymbolKinds: a module-like symbol is never a definition that changed (its parts are); a
# function's symbols are its locals.
CONTAINERS = {1, 2, 3, 4}  # File, Module, Namespace, Package
FUNCTIONS = {6, 9, 12}  # Method, Constructor, Function
PY_SUFFIXES = (".py", ".pyi")

Diagnostics = list[dict[str, Any]]
T = TypeVar("T")
ReadText = Callable[[Path], Awaitable[str]]


def path_of(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def changed_lines(old: str, new: str) -> tuple[int, int]:
    """The 0-based lines [start, end) of the old text that the edit replaced (start == end: lines
    inserted before line start)."""
    a, b = old.splitlines(), new.splitlines()
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    return start, end_a


@dataclass(frozen=True)
class Definition:
    """A definition the edit changed: its qualified name (containers first) and its name's
    position (0-based) in the old text."""

    qualname: str
    line: int
    character: int

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


@dataclass
class _Symbol:
    qualname: str
    kind: int
    start: int
    end: int
    line: int
    character: int
    local: bool


def _position(value: Any) -> tuple[int, int]:
    return int(value.get("line", 0)), int(value.get("character", 0))


def _flatten(items: Any, text_lines: list[str]) -> list[_Symbol]:
    """documentSymbol's answer (DocumentSymbol trees or SymbolInformation lists) as flat symbols."""
    out: list[_Symbol] = []

    def add(item: dict[str, Any], prefix: str, local: bool) -> None:
        name = str(item.get("name") or "")
        kind = int(item.get("kind") or 0)
        rng = item.get("range") or (item.get("location") or {}).get("range") or {}
        start, _ = _position(rng.get("start") or {})
        end, end_character = _position(rng.get("end") or {})
        if end_character == 0 and end > start:
            end -= 1  # a range that ends at the start of a line ends on the line before
        if "selectionRange" in item:
            line, character = _position(item["selectionRange"].get("start") or {})
        else:  # SymbolInformation: the name's first occurrence in its range
            line, character = start, 0
            for n in range(start, min(end + 1, len(text_lines))):
                found = text_lines[n].find(name)
                if found >= 0:
                    line, character = n, found
                    break
        qualname = prefix + name
        out.append(_Symbol(qualname, kind, start, end, line, character, local))
        for child in item.get("children") or []:
            if isinstance(child, dict):
                add(child, qualname + ".", local or kind in FUNCTIONS)

    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            container = item.get("containerName")
            add(item, f"{container}." if container else "", False)
    # SymbolInformation carries no tree: a symbol inside a function's range is one of its locals.
    functions = [s for s in out if s.kind in FUNCTIONS]
    for s in out:
        s.local = s.local or any(
            f is not s
            and f.start <= s.start
            and s.end <= f.end
            and (f.start, f.end) != (s.start, s.end)
            for f in functions
        )
    return out


def touched_symbols(symbols: list[_Symbol], start: int, end: int) -> list[Definition]:
    """The innermost non-local symbols whose lines the change [start, end) touches."""

    def touched(s: _Symbol) -> bool:
        if start == end:  # an insertion: inside the symbol, not before or after it
            return s.start < start <= s.end
        return s.start < end and start <= s.end

    hits = [s for s in symbols if not s.local and s.kind not in CONTAINERS and touched(s)]

    def inside(inner: _Symbol, outer: _Symbol) -> bool:
        if (inner.start, inner.end) == (outer.start, outer.end):
            return inner.qualname.startswith(outer.qualname + ".")
        return outer.start <= inner.start and inner.end <= outer.end

    innermost = [s for s in hits if not any(o is not s and inside(o, s) for o in hits)]
    return [Definition(s.qualname, s.line, s.character) for s in innermost]


def changed_python_definitions(old: str, new: str) -> list[Definition]:
    """Without a language server's symbols: the module's definitions the edit removed or whose
    signature it changed."""
    before, after = python_definitions(old), python_definitions(new)
    if before is None or after is None:
        return []
    return [
        Definition(d.qualname, d.line, d.character)
        for d in before.values()
        if d.qualname not in after or after[d.qualname].signature != d.signature
    ]


@dataclass
class Watched:
    """A file that uses a changed definition, and its diagnostics before the edit."""

    path: Path
    uri: str
    # How its diagnostics are taken: {"push"} (the editor's), or "pull" and/or "own" (pycalls).
    how: set[str] = field(default_factory=set)
    before: Diagnostics = field(default_factory=list)
    seq: int = 0
    uses: dict[Definition, list[tuple[int, int]]] = field(default_factory=dict)


async def pull(languages: Languages, path: Path, uri: str) -> Diagnostics | None:
    """The document's diagnostics, pulled (textDocument/diagnostic); None when nothing answers."""
    try:
        report = await languages.request(PULL, {"textDocument": {"uri": uri}}, path)
    except LanguageUnavailable as exc:
        log.debug("pull diagnostics for %s: %s", path, exc)
        return None
    if not isinstance(report, dict) or not isinstance(report.get("items"), list):
        return None
    return [d for d in report["items"] if isinstance(d, dict)]


def can_pull(languages: Languages, path: Path) -> bool:
    return PULL in languages.methods(path)


async def pull_if_answered(languages: Languages, path: Path, uri: str) -> Diagnostics | None:
    """The document's diagnostics pulled, where something answers textDocument/diagnostic."""
    return await pull(languages, path, uri) if can_pull(languages, path) else None


async def pulled_summary(
    languages: Languages,
    path: Path,
    uri: str,
    before: Diagnostics,
    label: str,
    origin: str = "editor, pulled",
) -> str | None:
    """An edited file's new problems, pulled again after the edit and compared with `before`;
    `origin` says who answered (the editor's servers, or those of `languageServers`)."""
    after = await pull(languages, path, uri)
    if after is None:
        return None
    return describe(label, new_problems(before, after), origin, fixed_problems(before, after))


@dataclass
class Following:
    """What an edit's reach is compared on, taken before the edit; `report()` after it."""

    root: Path
    path: Path
    languages: Languages
    read: ReadText
    board: DiagnosticsBoard | None
    old_text: str
    new_text: str
    definitions: list[Definition] = field(default_factory=list)
    files: list[Watched] = field(default_factory=list)

    async def report(self, wait_s: float = PUSH_WAIT_S) -> Reach:
        """The new errors in the other files (their pushes waited for up to `wait_s`)."""
        after = await asyncio.gather(*(self._after_within(w, wait_s) for w in self.files))
        reach = Reach([d.qualname for d in self.definitions], len(self.files))
        for watched, diagnostics in zip(self.files, after, strict=True):
            if diagnostics is None:
                continue
            seen = {diag_key(d) for d in watched.before}
            new = [d for d in diagnostics if is_error(d) and diag_key(d) not in seen]
            if new:
                reach.broken.append((watched.path, new))
        return reach

    async def _after_within(self, watched: Watched, wait_s: float) -> Diagnostics | None:
        """_after, given up (the file not compared) after AFTER_TIMEOUT_S."""
        return await within(self._after(watched, wait_s), AFTER_TIMEOUT_S)

    async def _after(self, watched: Watched, wait_s: float) -> Diagnostics | None:
        if "push" in watched.how and self.board is not None:
            pushed = await self.board.wait_settled(watched.uri, watched.seq, None, wait_s)
            if pushed is not None:
                return pushed.diagnostics
            current = self.board.current(watched.uri)
            return current.diagnostics if current is not None else None
        out: Diagnostics = []
        if "pull" in watched.how:
            out += await pull(self.languages, watched.path, watched.uri) or []
        if "own" in watched.how:
            out += await self._own(watched, self.new_text) or []
        return out

    async def _own(self, watched: Watched, module_text: str) -> Diagnostics | None:
        """agentls' own check of the file's uses of the definitions, against the module text."""
        try:
            text = await self.read(watched.path)
        except (OSError, UnicodeDecodeError):
            return None
        definitions = python_definitions(module_text) or {}
        bound = module_names(module_text)
        where = relative_name(self.path, self.root)
        out: Diagnostics = []
        for definition, uses in watched.uses.items():
            found: PyDef | None = definitions.get(definition.qualname)
            if found is None and definition.qualname in bound:
                continue  # still there, made otherwise (imported, assigned): nothing to check
            out += use_problems(text, uses, found, definition.name, where)
        return out


class Files(Protocol):
    """What of a workspace an edit's reach uses: its root, its language servers, its texts."""

    @property
    def root(self) -> Path: ...

    @property
    def languages(self) -> Languages: ...

    async def read_text(self, path: Path) -> str: ...


async def reach_before(
    files: Files,
    path: Path,
    uri: str,
    old_text: str | None,
    new_text: str,
    board: DiagnosticsBoard | None = None,
    timeout_s: float | None = None,
) -> Following | None:
    """Before an edit of `path` is applied: the definitions it changes, the files that use them
    and their diagnostics now. None when nothing can be followed (a new file, no language server
    answering references for it, no definition changed, no other file using one that something
    checks), or when the language server takes longer than `timeout_s` (BEFORE_TIMEOUT_S: a
    server still indexing does not hold the edit up)."""
    if old_text is None or REFERENCES not in files.languages.methods(path):
        return None
    timeout_s = BEFORE_TIMEOUT_S if timeout_s is None else timeout_s
    return await within(_follow(files, path, uri, old_text, new_text, board), timeout_s)


async def _follow(
    files: Files,
    path: Path,
    uri: str,
    old_text: str,
    new_text: str,
    board: DiagnosticsBoard | None,
) -> Following | None:
    languages = files.languages
    try:
        definitions = await _changed_definitions(path, uri, old_text, new_text, languages)
        if not definitions:
            return None
        reach = Following(
            files.root, path, languages, files.read_text, board, old_text, new_text, definitions
        )
        await _watch_references(reach, uri)
    except LanguageUnavailable as exc:
        log.debug("reach of an edit of %s: %s", path, exc)
        return None
    return reach if reach.files else None


# Work given up on by `within`, finishing in the background (kept here so it is not collected).
_LEFT: set[asyncio.Task[Any]] = set()


def _left_done(task: asyncio.Task[Any]) -> None:
    _LEFT.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.debug("reach work given up on failed later: %r", task.exception())


async def within(work: Awaitable[T], timeout_s: float) -> T | None:
    """`work`'s result, or None after `timeout_s`. Work given up on is not cancelled but left to
    finish: a language server starting for it stays started (cancelling its start or a request
    halfway leaves it unusable), its late answer is dropped."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.wait_for(asyncio.shield(task), timeout_s)
    except TimeoutError:
        log.debug("reach work given up on after %.1f s", timeout_s)
        _LEFT.add(task)
        task.add_done_callback(_left_done)
        return None


async def _changed_definitions(
    path: Path, uri: str, old_text: str, new_text: str, languages: Languages
) -> list[Definition]:
    is_python = path.suffix.lower() in PY_SUFFIXES
    if SYMBOLS in languages.methods(path):
        answer = await languages.request(SYMBOLS, {"textDocument": {"uri": uri}}, path)
        start, end = changed_lines(old_text, new_text)
        found = touched_symbols(_flatten(answer, old_text.splitlines()), start, end)
    elif is_python:
        found = changed_python_definitions(old_text, new_text)
    else:
        found = []
    return found[:MAX_DEFINITIONS]


async def _watch_references(reach: Following, uri: str) -> None:
    """Find the uses of each definition in other files, and take those files' diagnostics now."""
    files: dict[str, Watched] = {}

    async def references(definition: Definition) -> Any:
        params = {
            "textDocument": {"uri": uri},
            "position": {"line": definition.line, "character": definition.character},
            "context": {"includeDeclaration": False},
        }
        return await reach.languages.request(REFERENCES, params, reach.path)

    answers = await asyncio.gather(*(references(d) for d in reach.definitions))
    for definition, answer in zip(reach.definitions, answers, strict=True):
        for location in answer if isinstance(answer, list) else []:
            if not isinstance(location, dict):
                continue
            ref_uri = str(location.get("uri") or "")
            ref_path = path_of(ref_uri)
            if ref_uri == uri or ref_path is None or ref_path == reach.path:
                continue
            if reach.root not in ref_path.parents:
                continue  # not the workspace's (an installed library's, say)
            watched = files.get(ref_uri)
            if watched is None:
                if len(files) >= MAX_FILES:
                    continue
                watched = files[ref_uri] = Watched(ref_path, ref_uri)
            start = (location.get("range") or {}).get("start") or {}
            watched.uses.setdefault(definition, []).append(_position(start))
    covered = await asyncio.gather(*(_take_before(reach, w) for w in files.values()))
    reach.files = [w for w, ok in zip(files.values(), covered, strict=True) if ok]


async def _take_before(reach: Following, watched: Watched) -> bool:
    """A file's diagnostics before the edit, and how they are to be taken after; False when
    nothing covers the file. A push the editor made for the file is the answer: it is versioned,
    while an editor may answer a pull from what it last heard (VS Code does, which knows nothing
    of a file no one opened); otherwise a pull and, for Python, agentls' own check, together."""
    pushed = reach.board.current(watched.uri) if reach.board is not None else None
    if pushed is not None:
        watched.how, watched.before, watched.seq = {"push"}, pushed.diagnostics, pushed.seq
        return True
    pulled = await pull_if_answered(reach.languages, watched.path, watched.uri)
    if pulled is not None:
        watched.how.add("pull")
        watched.before += pulled
    if watched.path.suffix.lower() in PY_SUFFIXES and reach.path.suffix.lower() in PY_SUFFIXES:
        own = await reach._own(watched, reach.old_text)
        if own is not None:
            watched.how.add("own")
            watched.before += own
    return bool(watched.how)


def is_error(d: dict[str, Any]) -> bool:
    return int(d.get("severity") or 1) == 1


def describe_reach(
    reach: Reach, label: Callable[[Path], str], may_show: Callable[[Path], bool]
) -> str:
    """The tool result's lines on the other files: their new errors (files the model may not see
    left out, with a count), or that there are none."""
    what = ", ".join(reach.definitions)
    shown = [(path, problems) for path, problems in reach.broken if may_show(path)]
    hidden = len(reach.broken) - len(shown)
    hidden_note = f" ({hidden} file(s) you may not read left out)" if hidden else ""
    if not shown:
        return (
            f"Other files using what this edit changed ({what}): {reach.compared} checked, "
            f"no new errors{hidden_note}."
        )
    total = sum(len(problems) for _, problems in shown)
    lines = [
        f"Other files using what this edit changed ({what}): {total} new error(s) in "
        f"{len(shown)} file(s){hidden_note}:"
    ]
    for path, problems in shown[:MAX_FILES_REPORTED]:
        lines.append(f"  {label(path)}:")
        for d in problems[:MAX_PER_FILE]:
            start = (d.get("range") or {}).get("start") or {}
            severity = SEVERITY_NAMES.get(int(d.get("severity") or 1), "error")
            source = f" [{d['source']}]" if d.get("source") else ""
            message = str(d.get("message") or "").splitlines()[0] if d.get("message") else ""
            lines.append(f"    line {int(start.get('line', 0)) + 1}: {severity}{source} {message}")
        if len(problems) > MAX_PER_FILE:
            lines.append(f"    ... and {len(problems) - MAX_PER_FILE} more")
    if len(shown) > MAX_FILES_REPORTED:
        lines.append(f"  ... and {len(shown) - MAX_FILES_REPORTED} more file(s)")
    return "\n".join(lines)
