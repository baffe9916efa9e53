"""Before and after an edit: the problems it introduced (and fixed), in words for the tool result.

Diagnostics are LSP's, as plain JSON objects, from the editor or from agentls' own checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SEVERITY_NAMES = {1: "error", 2: "warning", 3: "info", 4: "hint"}
MAX_REPORTED = 20


def diag_key(d: dict[str, Any]) -> tuple[int, str, str]:
    return (int(d.get("severity") or 1), str(d.get("source") or ""), str(d.get("message") or ""))


def is_problem(d: dict[str, Any]) -> bool:
    """Errors and warnings are problems; information and hints are not."""
    return int(d.get("severity") or 1) <= 2


def new_problems(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Errors and warnings in `after` that `before` did not have (by severity, source, message)."""
    seen = {diag_key(d) for d in before}
    return [d for d in after if is_problem(d) and diag_key(d) not in seen]


def fixed_problems(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Errors and warnings in `before` that `after` no longer has: what the edit fixed."""
    return new_problems(after, before)


def by_source(problems: Sequence[dict[str, Any]]) -> str:
    """What each checker found, e.g. "pyright: 2 errors; ruff: 1 warning" ("" when the
    diagnostics name no source but agentls' own, which `origin` already says)."""
    counts: dict[str, dict[str, int]] = {}
    for d in problems:
        source = str(d.get("source") or "")
        if source and source != "agentls":
            severity = SEVERITY_NAMES.get(int(d.get("severity") or 1), "error")
            kinds = counts.setdefault(source, {})
            kinds[severity] = kinds.get(severity, 0) + 1
    return "; ".join(
        f"{source}: "
        + ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(kinds.items()))
        for source, kinds in sorted(counts.items())
    )


def describe(
    path_label: str,
    problems: Sequence[dict[str, Any]],
    origin: str,
    fixed: Sequence[dict[str, Any]] = (),
    none_found: str = "no new errors or warnings",
) -> str:
    """The summary for the tool result, naming what checked (`origin`): the new problems, one line
    each (at most MAX_REPORTED) after a count by checker, or `none_found`; and how many problems
    the edit fixed, when it fixed some."""
    fixed_note = f" It fixed {len(fixed)} problem(s) the file had before." if fixed else ""
    if not problems:
        return f"Diagnostics ({origin}): {none_found} in {path_label}.{fixed_note}"
    sources = by_source(problems)
    lines = [
        f"Diagnostics ({origin}): {len(problems)} new problem(s) in {path_label} after this edit"
        + (f" ({sources}):" if sources else ":")
    ]
    for d in list(problems)[:MAX_REPORTED]:
        start = (d.get("range") or {}).get("start") or {}
        line = int(start.get("line", 0)) + 1
        severity = SEVERITY_NAMES.get(int(d.get("severity") or 1), "error")
        source = f" [{d['source']}]" if d.get("source") else ""
        message = str(d.get("message", "")).splitlines()[0] if d.get("message") else ""
        lines.append(f"  line {line}: {severity}{source} {message}")
    if len(problems) > MAX_REPORTED:
        lines.append(f"  ... and {len(problems) - MAX_REPORTED} more")
    if fixed_note:
        lines.append(fixed_note.strip())
    return "\n".join(lines)
