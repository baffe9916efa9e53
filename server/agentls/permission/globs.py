"""Path globs as the permission rules read them: `**` crosses directories, `*` and `?` do not, a
plain path covers its tree; matched in time linear in the path (a hostile glob from a workspace's
`secretPatterns` must not stall the event loop), case-insensitively where asked."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Protocol

# A path glob as tokens: ("c", ch) a plain character, ("?",) one character but "/", and the star
# runs "*" ([^/]*), "**" (.*) and "**/" ((?:.*/)?), read left to right exactly as the
# translation always has ("***/" is "**" then "*/").
_Token = tuple[str, str]
_S1, _SA, _SD = "*", "**", "**/"
_STARS = frozenset({_S1, _SA, _SD})


@lru_cache(maxsize=512)
def _glob_tokens(pattern: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            tok, i = (_SD, ""), i + 3
        elif pattern.startswith("**", i):
            tok, i = (_SA, ""), i + 2
        elif pattern[i] == "*":
            tok, i = (_S1, ""), i + 1
        elif pattern[i] == "?":
            tok, i = ("?", ""), i + 1
        else:
            tok, i = ("c", pattern[i]), i + 1
        if out and tok[0] in _STARS and out[-1][0] in _STARS:
            # Adjacent stars as one (same strings): with "**" it is "**"; "**/" twice is "**/";
            # "**/" then "*" is "**" (a prefix up to the last "/", then the rest).
            merged = _merge_stars(out[-1][0], tok[0])
            if merged is not None:
                out[-1] = (merged, "")
                continue
        out.append(tok)
    return tuple(out)


def _merge_stars(a: str, b: str) -> str | None:
    if _SA in (a, b) or (a == _SD and b == _S1):
        return _SA
    if a == b == _SD:
        return _SD
    return None  # "*" then "**/" (the reading above never makes it): kept apart


_STAR_REGEX = {_S1: "[^/]*", _SA: ".*", _SD: "(?:.*/)?"}
_LAZY_STAR_REGEX = {_S1: "[^/]*?", _SA: ".*?", _SD: "(?:.*?/)??"}


def _glob_parts(tokens: Sequence[_Token]) -> tuple[str, list[tuple[str, str]]]:
    """The fixed head (before the first star) and each star with the fixed chunk after it (both as
    regex text)."""
    head: list[str] = []
    parts: list[tuple[str, list[str]]] = []
    for kind, ch in tokens:
        if kind in _STARS:
            parts.append((kind, []))
            continue
        piece = "[^/]" if kind == "?" else re.escape(ch)
        (parts[-1][1] if parts else head).append(piece)
    return "".join(head), [(star, "".join(chunk)) for star, chunk in parts]


def _first_chunk_safe(star: str, following: str) -> bool:
    """Whether the first place a star's chunk can match is as good as any later one, given the star
    after that chunk: "**" takes up whatever is skipped; "*" after "*" too (the skipped stretch has
    no "/", or the chunk holds a "/" and has only one place)."""
    return following == _SA or (star == _S1 and following == _S1)


def _linear_body(tokens: Sequence[_Token], exact: bool) -> str | None:
    """The regex (before the end anchor) in fnmatch's linear form: every star but the last takes
    its chunk's first match atomically, the last star's chunk is anchored by the end. None when a
    first match could be the wrong one and `exact` is asked; otherwise (not exact) a superset:
    every star as "**"."""
    head, parts = _glob_parts(tokens)
    stars = [s for s, _ in parts]
    if not exact:
        stars = [_SA] * len(stars)
    out = [head]
    # A first "**/" followed only by "*"s may stay as it is: it can only stop after a "/", and the
    # rest, from there, keeps to the few directories its chunks' "/"s name ("**/.env*").
    plain_first = exact and stars[:1] == [_SD] and all(s == _S1 for s in stars[1:])
    for k, (_, chunk) in enumerate(parts):
        star = stars[k]
        if k == len(parts) - 1 or (k == 0 and plain_first):
            out.append(_STAR_REGEX[star] + chunk)
        elif not chunk or not _first_chunk_safe(star, stars[k + 1]):
            return None
        else:
            out.append(f"(?>{_LAZY_STAR_REGEX[star]}{chunk})")
    return "".join(out)


@lru_cache(maxsize=512)
def glob_body(pattern: str) -> str:
    """A path glob as a regex (without the end anchor) that matches in linear time: `**` crosses
    directories, `*` and `?` do not; a bare directory covers its tree. Exact when glob_regex can
    use it (see _linear_body); otherwise a superset (every star as `**`), for PathFilter's test."""
    if not any(ch in pattern for ch in "*?"):
        # "src" or "/opt/data": the path itself and everything under it.
        return re.escape(pattern) + "(?:/.*)?"
    tokens = _glob_tokens(pattern)
    body = _linear_body(tokens, exact=True)
    if body is None:
        body = _linear_body(tokens, exact=False)
    assert body is not None
    return body


class _Matcher(Protocol):
    def match(self, subject: str, /) -> object | None: ...


class _GlobAutomaton:
    """A path glob matched by simulating its automaton (a set of states as an int's bits): linear in
    the path's length, for the globs whose regex would need to backtrack (see _linear_body)."""

    def __init__(self, tokens: Sequence[_Token], ignore_case: bool) -> None:
        # State s consumes one character: `advance` (a character test) to s + 1, `loop` stays; a
        # star's state also moves on without a character (`skip`).
        self._advance: list[Callable[[str], bool] | None] = []
        self._loop: list[Callable[[str], bool] | None] = []
        skips: dict[int, int] = {}
        flags = re.IGNORECASE if ignore_case else 0

        def add(advance: Callable[[str], bool] | None, loop: Callable[[str], bool] | None) -> int:
            self._advance.append(advance)
            self._loop.append(loop)
            return len(self._advance) - 1

        def not_slash(c: str) -> bool:
            return c != "/"

        def anything(_c: str) -> bool:
            return True

        def slash(c: str) -> bool:
            return c == "/"

        for kind, ch in tokens:
            if kind == "c":
                add(re.compile(re.escape(ch), flags | re.DOTALL).fullmatch, None)  # type: ignore[arg-type]
            elif kind == "?":
                add(not_slash, None)
            elif kind == _S1 or kind == _SA:
                s = add(None, not_slash if kind == _S1 else anything)
                skips[s] = 1 << (s + 1)
            else:  # "**/": nothing, or anything then "/"
                s = add(None, None)
                add(slash, anything)
                skips[s] = (1 << (s + 1)) | (1 << (s + 2))
        self._final = 1 << len(self._advance)
        self._skips = sorted(skips.items())
        self._steps: dict[str, tuple[int, int]] = {}

    def _closure(self, states: int) -> int:
        for s, targets in self._skips:  # skips only lead forward: one pass in order
            if states >> s & 1:
                states |= targets
        return states

    def _step(self, c: str) -> tuple[int, int]:
        step = self._steps.get(c)
        if step is None:
            advance = sum(1 << s for s, f in enumerate(self._advance) if f is not None and f(c))
            loop = sum(1 << s for s, f in enumerate(self._loop) if f is not None and f(c))
            step = (advance, loop)
            if len(self._steps) < 4096:
                self._steps[c] = step
        return step

    def match(self, subject: str, /) -> bool | None:
        states = self._closure(1)
        for c in subject:
            advance, loop = self._step(c)
            states = self._closure(((states & advance) << 1) | (states & loop))
            if not states:
                return None
        return True if states & self._final else None


@lru_cache(maxsize=512)
def glob_regex(pattern: str, ignore_case: bool = False) -> _Matcher:
    """A path glob's exact matcher, linear in the path's length: its regex (glob_body) when that
    is exact, else its automaton."""
    flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    if not any(ch in pattern for ch in "*?"):
        return re.compile(glob_body(pattern) + r"\Z", flags)
    tokens = _glob_tokens(pattern)
    body = _linear_body(tokens, exact=True)
    if body is None:
        return _GlobAutomaton(tokens, ignore_case)
    return re.compile(body + r"\Z", flags)


def literal_runs(pattern: str) -> list[str]:
    """The runs of plain characters of a path glob (as glob_body reads it): every path the glob
    matches contains each of them."""
    runs: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i) or pattern[i] in "*?":
            step = 3 if pattern.startswith("**/", i) else 2 if pattern.startswith("**", i) else 1
            if current:
                runs.append("".join(current))
                current = []
            i += step
            continue
        current.append(pattern[i])
        i += 1
    if current:
        runs.append("".join(current))
    return runs


def rule_pattern(pattern: str) -> str:
    return os.path.expanduser(pattern).rstrip("/") or "/"


def path_matches(pattern: str, subject: str) -> bool:
    return glob_regex(rule_pattern(pattern)).match(subject) is not None
