"""Globs as the search tools read them: a gitignore-style glob as a regex over relative paths,
and whether a pattern spells out a hidden (dot) name."""

from __future__ import annotations

import re


def names_hidden(pattern: str) -> bool:
    """Whether the pattern spells out a dotfile or dot-directory (`.env`, `.github/**`)."""
    for segment in pattern.replace("\\", "/").split("/"):
        if segment.startswith(".") and segment not in (".", ".."):
            return True
        if segment.startswith("{") and any(
            p.startswith(".") for p in segment.strip("{}").split(",")
        ):
            return True
    return False


def _translate_glob(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "{":
            depth, j = 0, i
            while j < n:
                if pattern[j] == "{":
                    depth += 1
                elif pattern[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                out.append(re.escape(c))
                i += 1
                continue
            alternatives = _split_top_level(pattern[i + 1 : j])
            out.append("(?:" + "|".join(_translate_glob(a) for a in alternatives) + ")")
            i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for c in body:
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        current.append(c)
    parts.append("".join(current))
    return parts


def glob_matcher(pattern: str) -> re.Pattern[str]:
    """A regex for a gitignore-style glob over slash-separated relative paths: a pattern without
    `/` matches the file name at any depth; one with `/` matches the whole path from the search
    root; `**` crosses directories, `*` and `?` do not; `{a,b}` and `[abc]` work."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if pattern.endswith("/"):
        pattern += "**"
    if "/" not in pattern:
        return re.compile("(?:.*/)?" + _translate_glob(pattern) + r"\Z", re.DOTALL)
    return re.compile(_translate_glob(pattern.lstrip("/")) + r"\Z", re.DOTALL)
