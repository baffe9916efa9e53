"""Diagnostics as verification: what the editor (or our own checks) reports that an edit made new."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEVERITY_NAMES = {1: "error", 2: "warning", 3: "info", 4: "hint"}
MAX_REPORTED = 20


@dataclass
class Pushed:
    """The latest diagnostics a client pushed for one uri."""

    version: int | None
    diagnostics: list[dict[str, Any]]
    seq: int


def diag_key(d: dict[str, Any]) -> tuple[int, str, str]:
    return (int(d.get("severity") or 1), str(d.get("source") or ""), str(d.get("message") or ""))


def is_problem(d: dict[str, Any]) -> bool:
    return int(d.get("severity") or 1) <= 2


def new_problems(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Errors and warnings in `after` that `before` did not have (by severity, source, message)."""
    seen = {diag_key(d) for d in before}
    return [d for d in after if is_problem(d) and diag_key(d) not in seen]


def describe(path_label: str, problems: Sequence[dict[str, Any]], origin: str) -> str:
    if not problems:
        return f"Diagnostics ({origin}): no new errors or warnings in {path_label}."
    lines = [
        f"Diagnostics ({origin}): {len(problems)} new problem(s) in {path_label} after this edit:"
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
    return "\n".join(lines)


def own_checks(path: Path, text: str) -> list[dict[str, Any]]:
    """What agentls can check itself, without the editor: Python syntax, JSON syntax."""
    suffix = path.suffix.lower()
    if suffix in (".py", ".pyi"):
        try:
            compile(text, str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:
            line = max((exc.lineno or 1) - 1, 0)
            col = max((exc.offset or 1) - 1, 0)
            return [_diag(line, col, f"SyntaxError: {exc.msg}", "agentls")]
        except ValueError as exc:  # e.g. null bytes
            return [_diag(0, 0, str(exc), "agentls")]
    elif suffix == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return [_diag(exc.lineno - 1, exc.colno - 1, f"JSON: {exc.msg}", "agentls")]
    return []


def _diag(line: int, col: int, message: str, source: str) -> dict[str, Any]:
    return {
        "range": {
            "start": {"line": line, "character": col},
            "end": {"line": line, "character": col + 1},
        },
        "severity": 1,
        "source": source,
        "message": message,
    }


@dataclass
class DiagnosticsBoard:
    """Diagnostics pushed by the client (agent/diagnostics), and a way to wait for the next push."""

    pushed: dict[str, Pushed] = field(default_factory=dict)
    _seq: int = 0
    _changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def push(self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        self._seq += 1
        self.pushed[uri] = Pushed(version, diagnostics, self._seq)
        async with self._condition():
            self._condition().notify_all()

    def current(self, uri: str) -> Pushed | None:
        return self.pushed.get(uri)

    async def wait_after(
        self, uri: str, seq: int, min_version: int | None, wait_s: float
    ) -> Pushed | None:
        """The first push for uri newer than `seq` (and at least `min_version`), or None."""

        def ready() -> bool:
            p = self.pushed.get(uri)
            if p is None or p.seq <= seq:
                return False
            return min_version is None or p.version is None or p.version >= min_version

        condition = self._condition()
        try:
            async with condition:
                await asyncio.wait_for(condition.wait_for(ready), wait_s)
        except TimeoutError:
            return None
        return self.pushed.get(uri)
